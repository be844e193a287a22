package inject_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// addGoldenSeeds seeds a fuzz target with every golden input document.
func addGoldenSeeds(f *testing.F) {
	inputs, _ := filepath.Glob("testdata/golden/*/input.yaml")
	crashers, _ := filepath.Glob("testdata/fuzz-regressions/*.yaml")
	for _, path := range append(inputs, crashers...) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			f.Add(doc)
		}
	}
}

// FuzzInject checks the injector's promises on arbitrary documents: no
// panic, output that parses, idempotence, and an exact round trip.
func FuzzInject(f *testing.F) {
	addGoldenSeeds(f)
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, entries := in.ProcessText(inject.OpInject, doc, 0)
		report := inject.Report(entries)
		if !report.Changed() {
			if !bytes.Equal(out, doc) {
				t.Fatalf("nothing injected but the document changed:\n%q\n%q", doc, out)
			}
			return
		}
		if !reformattedAny(entries) {
			if node, err := yaml.Parse(string(doc)); err == nil && !node.IsNil() {
				in.ProcessNode(inject.OpInject, node, 0)
				want, _ := node.MarshalJSON()
				got, err := yaml.Parse(string(out))
				if err != nil {
					t.Fatalf("output does not parse: %v\n%s", err, out)
				}
				if gotJSON, _ := got.MarshalJSON(); !bytes.Equal(gotJSON, want) {
					t.Fatalf("text and node paths disagree:\n%s\n%s\n%s", out, gotJSON, want)
				}
			}
		}
		again, againEntries := in.ProcessText(inject.OpInject, out, 0)
		if !bytes.Equal(again, out) || inject.Report(againEntries).Changed() {
			t.Fatalf("not idempotent:\n%s\n---- second run:\n%s", out, again)
		}
		back, backEntries := in.ProcessText(inject.OpUninject, out, 0)
		for i, e := range backEntries {
			if e.Action == inject.Failed && i < len(entries) && entries[i].Changed() {
				t.Fatalf("uninject failed on an object we injected: %v\n%s", e, out)
			}
		}
		clean, _ := in.ProcessText(inject.OpUninject, doc, 0)
		if !reformattedAny(entries) && !bytes.Equal(back, clean) {
			t.Fatalf("uninject(inject(x)) != uninject(x):\n%q\n%q", back, clean)
		}
	})
}

func reformattedAny(entries []inject.Entry) bool {
	for _, e := range entries {
		if e.Reformatted {
			return true
		}
	}
	return false
}

// FuzzParseConfig checks that the template loader never panics and that
// every template it accepts can build an injector.
func FuzzParseConfig(f *testing.F) {
	configs, _ := filepath.Glob("testdata/golden/*/config.yaml")
	for _, path := range configs {
		data, _ := os.ReadFile(path)
		f.Add(data)
	}
	f.Add([]byte(inject.DefaultTemplateYAML()))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := inject.ParseConfig(data, nil)
		if err != nil {
			return
		}
		if cfg.Template == nil {
			return
		}
		if _, err := inject.New(cfg.Template, cfg.Settings); err != nil && cfg.Settings.Image == "" && cfg.Settings.Native == nil {
			t.Fatalf("accepted template rejected by New: %v", err)
		}
	})
}

// FuzzParseStatus checks that the status parser never panics and that what
// it accepts survives a round trip.
func FuzzParseStatus(f *testing.F) {
	f.Add(`{"v":1,"template":"abc","containers":["envoy"],"volumes":["envoy-conf"],"created":["volumes"]}`)
	f.Add(`{"v":1,"template":"abc","changed":{"annotations":{"a":"b"}}}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, value string) {
		s, err := inject.ParseStatus(value)
		if err != nil {
			return
		}
		again, err := inject.ParseStatus(s.Encode())
		if err != nil || again.Encode() != s.Encode() {
			t.Fatalf("status does not round-trip: %q -> %q (%v)", value, s.Encode(), err)
		}
	})
}
