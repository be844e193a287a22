package inject_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// checkProperties checks, byte for byte, what every injection must satisfy:
// injecting again changes nothing, uninject undoes exactly, documents that
// were not changed are untouched, and the diff only adds lines, as many as
// the records account for, but for the few documented changes of an input
// line (checkDiff).
func checkProperties(t *testing.T, in *inject.Injector, input, out []byte, report inject.Report) {
	t.Helper()
	reformatted := false
	for _, e := range report {
		reformatted = reformatted || e.Reformatted
	}

	if want := runNodes(t, in, inject.OpInject, input); !sameDocuments(t, out, want) {
		t.Errorf("the text path and the node path disagree:\n%s\nnode path:\n%s", out, want)
	}

	again, againReport := run(t, in, inject.OpInject, out)
	if !bytes.Equal(again, out) {
		t.Errorf("inject(inject(x)) != inject(x):\n%s", again)
	}
	if againReport.Changed() {
		t.Errorf("second injection reports changes:\n%s", reportText(againReport))
	}

	back, _ := run(t, in, inject.OpUninject, out)
	if !bytes.Contains(input, []byte(naming.StatusAnnotation)) {
		// Absolute: not "the same as uninject(x)", which could lose the
		// same byte twice.
		if !bytes.Equal(back, input) {
			t.Errorf("uninject(inject(x)) != x:\n%s\nwant:\n%s", back, input)
		}
	} else if clean, _ := run(t, in, inject.OpUninject, input); !bytes.Equal(back, clean) {
		t.Errorf("uninject(inject(x)) != uninject(x):\n%s\nwant:\n%s", back, clean)
	}
	if reformatted {
		t.Errorf("a document was re-serialized; every input the parser accepts must be edited in place")
	}

	inDocs, outDocs := documents(t, input), documents(t, out)
	if len(inDocs) != len(outDocs) {
		t.Fatalf("document count changed: %d in, %d out", len(inDocs), len(outDocs))
	}
	for i := range inDocs {
		checkJSON(t, inDocs[i], outDocs[i])
	}
	changedDocs := map[int]bool{}
	for _, e := range report {
		changedDocs[e.Document] = changedDocs[e.Document] || e.Changed()
	}
	for i := range inDocs {
		if !changedDocs[i] && inDocs[i] != outDocs[i] {
			t.Errorf("document %d was not changed but its bytes differ:\n%s", i, outDocs[i])
		}
	}

	if !bytes.Contains(input, []byte(naming.StatusAnnotation)) && !bytes.Contains(out, []byte(`"changed"`)) {
		for i := range inDocs {
			checkDiff(t, in.Template(), inDocs[i], outDocs[i])
		}
	}
}

// runNodes applies op through the node path, one document at a time, and
// serializes the result.
func runNodes(t *testing.T, in *inject.Injector, op inject.Op, src []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for i, doc := range documents(t, src) {
		if i > 0 {
			out.WriteString("---\n")
		}
		n, err := inject.ParseDocument([]byte(doc))
		if err != nil || n == nil {
			out.WriteString(doc)
			continue
		}
		in.ProcessNode(op, n, i)
		out.WriteString(n.MustString())
	}
	return out.Bytes()
}

// documents splits a stream into its documents' text.
func documents(t *testing.T, src []byte) []string {
	t.Helper()
	var docs []string
	if err := manifest.Process(bytes.NewReader(src), &bytes.Buffer{}, func(_ int, doc []byte) []byte {
		docs = append(docs, string(doc))
		return doc
	}); err != nil {
		t.Fatal(err)
	}
	return docs
}

// sameDocuments compares two streams by content rather than bytes. The
// records' Status.Empty is left out: only the text path can write it.
func sameDocuments(t *testing.T, a, b []byte) bool {
	da, db := documents(t, a), documents(t, b)
	if len(da) != len(db) {
		return false
	}
	for i := range da {
		x, err1 := inject.ParseDocument([]byte(da[i]))
		y, err2 := inject.ParseDocument([]byte(db[i]))
		if err1 != nil || err2 != nil || x == nil || y == nil {
			if da[i] != db[i] {
				return false
			}
			continue
		}
		withoutEmptyRecords(x.YNode())
		withoutEmptyRecords(y.YNode())
		jx, _ := x.MarshalJSON()
		jy, _ := y.MarshalJSON()
		if !bytes.Equal(jx, jy) {
			return false
		}
	}
	return true
}

// checkJSON: a JSON document stays JSON, and when the input is laid out as
// encoding/json lays it out (compact, or indented by some unit), so is the
// output.
func checkJSON(t *testing.T, in, out string) {
	t.Helper()
	if !json.Valid([]byte(in)) {
		return
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("JSON in, not JSON out:\n%s", out)
		return
	}
	layout := func(doc string) string {
		doc = strings.ReplaceAll(doc, "\r\n", "\n")
		trimmed := strings.TrimRight(doc, "\n")
		lines := strings.SplitN(trimmed, "\n", 3)
		var buf bytes.Buffer
		if len(lines) < 2 {
			_ = json.Compact(&buf, []byte(trimmed))
		} else {
			unit := lines[1][:len(lines[1])-len(strings.TrimLeft(lines[1], " \t"))]
			_ = json.Indent(&buf, []byte(trimmed), "", unit)
		}
		return buf.String() + doc[len(trimmed):]
	}
	inNorm := strings.ReplaceAll(in, "\r\n", "\n")
	if layout(in) == inNorm {
		if got := strings.ReplaceAll(out, "\r\n", "\n"); layout(out) != got {
			t.Errorf("the output is not laid out as the input (encoding/json's own layout):\n%s\nwant:\n%s", got, layout(out))
		}
	}
}

// withoutEmptyRecords drops Status.Empty from every status record in the
// tree: the text path records what was between the brackets of an empty
// collection, the node path has no text to record.
func withoutEmptyRecords(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if !strings.HasSuffix(k.Value, naming.StatusAnnotation) || v.Kind != yaml.ScalarNode {
				continue
			}
			if s, err := record.Parse(k.Value, v.Value); err == nil && s.Empty != nil {
				s.Empty = nil
				v.Value = s.Encode()
			}
		}
	}
	for _, c := range n.Content {
		withoutEmptyRecords(c)
	}
}
