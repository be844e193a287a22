package inject_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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

// BenchmarkInjectText is kubectl inject --local's path over the same input.
func BenchmarkInjectText(b *testing.B) {
	src := benchInput(b, 100)
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		err := manifest.Process(bytes.NewReader(src), io.Discard, func(i int, doc []byte) []byte {
			out, _ := in.ProcessText(inject.OpInject, doc, i)
			return out
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInjectTextUnchanged re-runs on injected input: the common CI case.
func BenchmarkInjectTextUnchanged(b *testing.B) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	var injected bytes.Buffer
	if err := manifest.Process(bytes.NewReader(benchInput(b, 100)), &injected, func(i int, doc []byte) []byte {
		out, _ := in.ProcessText(inject.OpInject, doc, i)
		return out
	}); err != nil {
		b.Fatal(err)
	}
	src := injected.Bytes()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if err := manifest.Process(bytes.NewReader(src), io.Discard, func(i int, doc []byte) []byte {
			out, _ := in.ProcessText(inject.OpInject, doc, i)
			return out
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInjectNodes is the KRM function's path: a kyaml whole-stream
// read, injection on nodes, and a kyaml write.
func BenchmarkInjectNodes(b *testing.B) {
	src := benchInput(b, 100)
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		b.Fatal(err)
	}
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
