package inject_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/template"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// addGoldenSeeds seeds a fuzz target with every golden input document.
func addGoldenSeeds(f *testing.F) {
	inputs, _ := filepath.Glob("testdata/golden/*/input.yaml")
	profiles, _ := filepath.Glob("testdata/profiles/*/input.yaml")
	inputs = append(inputs, profiles...)
	crashers, _ := filepath.Glob("testdata/fuzz-regressions/*.yaml")
	for _, path := range append(inputs, crashers...) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			f.Add(doc, uint8(len(doc)))
		}
	}
}

// fuzzTemplates are the templates FuzzInject draws from: the embedded
// default, as a native sidecar, with an image override, with pod labels and
// annotations, and with an init container before a native sidecar.
func fuzzTemplates(f testing.TB) []*inject.Injector {
	native := true
	metadata, err := inject.ParseTemplate([]byte(`metadata:
  labels: {mesh: kinject}
  annotations: {prometheus.io/scrape: "true", note: 'a "quoted" <value>'}
containers:
- name: proxy
  image: proxy:1
  ports: [{containerPort: 15001}]
`))
	if err != nil {
		f.Fatal(err)
	}
	inits, err := inject.ParseTemplate([]byte(`initContainers:
- name: mesh-init
  image: busybox
  command: [sh, -c, "true"]
- name: proxy
  image: proxy:1
  restartPolicy: Always
volumes:
- name: certs
  emptyDir: {}
`))
	if err != nil {
		f.Fatal(err)
	}
	var out []*inject.Injector
	for _, c := range []struct {
		tpl *template.Template
		s   inject.Settings
	}{
		{inject.DefaultTemplate(), inject.Settings{}},
		{inject.DefaultTemplate(), inject.Settings{Native: &native}},
		{inject.DefaultTemplate(), inject.Settings{Image: "registry.local/envoy:v2"}},
		{metadata, inject.Settings{}},
		{inits, inject.Settings{}},
	} {
		in, err := inject.New(c.tpl, c.s)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}

// jsonSeeds are JSON documents as kubectl, jq and generators write them.
var jsonSeeds = []string{
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"c"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"}]}}}}`,
	"{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\n    \"name\": \"p\",\n    \"annotations\": {}\n  },\n  \"spec\": {\n    \"containers\": [\n      {\n        \"name\": \"a\",\n        \"image\": \"x\"\n      }\n    ],\n    \"volumes\": null\n  }\n}\n",
	`{"apiVersion": "v1", "kind": "List", "items": [null, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {"initContainers": [], "containers": [{"name": "j", "image": "x"}]}}}}]}`,
}

// FuzzInject checks the injector's promises on arbitrary documents and
// templates: no panic; output that parses and means what the node path
// makes; idempotence; uninject(inject(x)) == x byte for byte for input
// without a status record; JSON stays JSON, re-serialized or not.
func FuzzInject(f *testing.F) {
	addGoldenSeeds(f)
	for _, s := range jsonSeeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(3))
	}
	injectors := fuzzTemplates(f)
	f.Fuzz(func(t *testing.T, doc []byte, which uint8) {
		in := injectors[int(which)%len(injectors)]
		out, entries := in.ProcessText(inject.OpInject, doc, 0)
		report := inject.Report(entries)
		if !report.Changed() {
			if !bytes.Equal(out, doc) {
				t.Fatalf("nothing injected but the document changed:\n%q\n%q", doc, out)
			}
			return
		}
		reformatted := reformattedAny(entries)
		if !reformatted {
			if node, err := inject.ParseDocument(doc); err == nil && node != nil {
				in.ProcessNode(inject.OpInject, node, 0)
				want, _ := node.MarshalJSON()
				got, err := inject.ParseDocument(out)
				if err != nil || got == nil {
					t.Fatalf("output does not parse: %v\n%s", err, out)
				}
				withoutEmptyRecords(got.YNode()) // the node path has no text to record
				if gotJSON, _ := got.MarshalJSON(); !bytes.Equal(gotJSON, want) {
					t.Fatalf("text and node paths disagree:\n%s\n%s\n%s", out, gotJSON, want)
				}
			}
		}
		if json.Valid(doc) && !json.Valid(out) {
			// Re-serialized documents too: JSON is written back as JSON.
			t.Fatalf("JSON in, not JSON out (reformatted: %v):\n%s", reformatted, out)
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
		if reformatted {
			return // the documented fallback: meaning kept, bytes not
		}
		if !bytes.Contains(doc, []byte(naming.StatusAnnotation)) {
			if !bytes.Equal(back, doc) {
				t.Fatalf("uninject(inject(x)) != x:\n%q\n%q", back, doc)
			}
		} else if clean, _ := in.ProcessText(inject.OpUninject, doc, 0); !bytes.Equal(back, clean) {
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
	f.Add(`{"v":1,"template":"abc","volumes":["envoy-conf"],"empty":{"volumes":"\n        ","metadata":" "}}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, value string) {
		s, err := record.Parse(naming.StatusAnnotation, value)
		if err != nil {
			return
		}
		again, err := record.Parse(naming.StatusAnnotation, s.Encode())
		if err != nil || again.Encode() != s.Encode() {
			t.Fatalf("status does not round-trip: %q -> %q (%v)", value, s.Encode(), err)
		}
	})
}
