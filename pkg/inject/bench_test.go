package inject_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/template"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
)

func benchInput(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	if err := gen.Write(&buf, n); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkFloor is the floor: stream every document through yaml.v3 with
// a fresh encoder per document, changing nothing.
func BenchmarkFloor(b *testing.B) {
	src := benchInput(b, 100)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dec := yaml.NewDecoder(bytes.NewReader(src))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			enc := yaml.NewEncoder(io.Discard)
			if err := enc.Encode(&n); err != nil {
				b.Fatal(err)
			}
			enc.Close()
		}
	}
}

// injectStream is kubectl inject --local's path: stream, inject, write.
func injectStream(b *testing.B, in *inject.Injector, src []byte, w io.Writer) {
	err := manifest.Process(bytes.NewReader(src), w, func(i int, doc []byte) []byte {
		out, _ := in.ProcessText(inject.OpInject, doc, i)
		return out
	})
	if err != nil {
		b.Fatal(err)
	}
}

func benchInjector(b *testing.B) *inject.Injector {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// BenchmarkInjectText is kubectl inject --local's path over the floor's input.
func BenchmarkInjectText(b *testing.B) {
	src, in := benchInput(b, 100), benchInjector(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		injectStream(b, in, src, io.Discard)
	}
}

// BenchmarkInjectTextUnchanged re-runs on injected input: the common CI case.
func BenchmarkInjectTextUnchanged(b *testing.B) {
	in := benchInjector(b)
	var injected bytes.Buffer
	injectStream(b, in, benchInput(b, 100), &injected)
	src := injected.Bytes()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		injectStream(b, in, src, io.Discard)
	}
}

// BenchmarkInjectNodes is the KRM function's path: a kyaml whole-stream
// read, injection on nodes, and a kyaml write.
func BenchmarkInjectNodes(b *testing.B) {
	src, in := benchInput(b, 100), benchInjector(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(src), OmitReaderAnnotations: true}).Read()
		if err != nil {
			b.Fatal(err)
		}
		for i, n := range nodes {
			in.ProcessNode(inject.OpInject, n, i)
		}
		if err := (kio.ByteWriter{Writer: io.Discard}).Write(nodes); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOverrides is the generator's input with override annotations on
// every Deployment's pod template (gen.WithOverrides).
func benchOverrides(b *testing.B, n int, distinct bool) []byte {
	return gen.WithOverrides(benchInput(b, n), distinct)
}

// BenchmarkInjectTextOverrides: every Deployment asks for the same values.
func BenchmarkInjectTextOverrides(b *testing.B) {
	src, in := benchOverrides(b, 100, false), benchInjector(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		injectStream(b, in, src, io.Discard)
	}
}

// BenchmarkInjectTextOverridesDistinct: every Deployment asks for a value
// of its own. A fresh injector per run, as in one kubectl inject run: the
// sidecars built for the values are not reused across runs.
func BenchmarkInjectTextOverridesDistinct(b *testing.B) {
	src := benchOverrides(b, 100, true)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		injectStream(b, benchInjector(b), src, io.Discard)
	}
}

// fixedPortTemplate is the default template with the app port fixed: its
// app-port parameter has no expression, so nothing is computed.
func fixedPortTemplate(b *testing.B) *template.Template {
	src := inject.DefaultTemplateYAML()
	start := strings.Index(src, "  expression: |-")
	end := strings.Index(src, "- annotation: image")
	if start < 0 || end < start {
		b.Fatal("the default template's app-port expression moved")
	}
	tpl, err := inject.ParseTemplate([]byte(src[:start] + src[end:]))
	if err != nil {
		b.Fatal(err)
	}
	return tpl
}

// benchRun is one kubectl inject --local run: a fresh injector with tpl
// over src.
func benchRun(b *testing.B, tpl *template.Template, src []byte) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		in, err := inject.New(tpl, inject.Settings{})
		if err != nil {
			b.Fatal(err)
		}
		injectStream(b, in, src, io.Discard)
	}
}

// BenchmarkInjectTextRun is one --local run with the default template,
// whose app port is computed from each pod template.
func BenchmarkInjectTextRun(b *testing.B) {
	benchRun(b, inject.DefaultTemplate(), benchInput(b, 100))
}

// BenchmarkInjectTextRunFixedPort is the same with the app port fixed:
// BenchmarkInjectTextRun less this is what computing the port costs.
func BenchmarkInjectTextRunFixedPort(b *testing.B) {
	benchRun(b, fixedPortTemplate(b), benchInput(b, 100))
}
