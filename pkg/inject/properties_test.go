package inject_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// checkProperties checks, byte for byte, what every injection must satisfy:
// injecting again changes nothing, uninject undoes exactly, documents that
// were not changed are untouched, and the diff only adds lines.
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
	if !bytes.Contains(input, []byte(inject.StatusAnnotation)) {
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

	if !bytes.Contains(input, []byte(inject.StatusAnnotation)) && !bytes.Contains(out, []byte(`"changed"`)) {
		extra, ok := onlyAdded(string(input), string(out))
		switch {
		case !ok:
			// A line may change only where an injection must edit it: a
			// flow collection on one line ([...], {...}) or an explicit
			// empty value (null, ~) that gets the items.
			for _, line := range changedLines(string(input), string(out)) {
				// In JSON, an item added after the last one puts a comma
				// after it.
				commaAdded := strings.Contains(string(out), "\n"+strings.TrimSuffix(line, "\r")+",")
				if !strings.ContainsAny(line, "[]{}") && !nullValueLine.MatchString(line) && !commaAdded {
					t.Errorf("the diff changes the input line %q, which holds no flow collection and no null", line)
				}
			}
		case bytes.Contains(input, []byte("{")) && bytes.Contains(input, []byte("}")):
			// Flow and JSON items are counted in their own rendering.
		default:
			if want := expectedAddedLines(t, in.Template(), out); extra != want {
				t.Errorf("%d lines added, but the status records and the template account for %d", extra, want)
			}
		}
	}
}

var nullValueLine = regexp.MustCompile(`:\s*(null|Null|NULL|~)?\s*(#.*)?$`)

// changedLines returns the lines of before that are not in after, in order.
func changedLines(before, after string) []string {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	j := 0
	for _, line := range b {
		k := j
		for k < len(a) && a[k] != line {
			k++
		}
		if k == len(a) {
			out = append(out, line)
			continue
		}
		j = k + 1
	}
	return out
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

var statusLine = regexp.MustCompile(`sidecar\.kinject\.dev/status: '(\{.*\})'`)

// expectedAddedLines counts the lines an injection must add, from the status
// records in out and the template: each added item's own lines, one line per
// added label or annotation and for the status record, and one per field
// created.
func expectedAddedLines(t *testing.T, tpl *inject.Template, out []byte) int {
	t.Helper()
	items := map[string]*yaml.Node{}
	for _, list := range [][]*yaml.Node{tpl.Containers, tpl.InitContainers, tpl.Volumes} {
		for _, n := range list {
			items[yaml.NewRNode(n).Field("name").Value.YNode().Value] = n
		}
	}
	total := 0
	for _, m := range statusLine.FindAllSubmatch(out, -1) {
		s, err := inject.ParseStatus(strings.ReplaceAll(string(m[1]), "''", "'"))
		if err != nil {
			t.Fatal(err)
		}
		for _, names := range [][]string{s.Containers, s.InitContainers, s.Volumes} {
			for _, name := range names {
				text, err := yaml.Marshal(items[name])
				if err != nil {
					t.Fatal(err)
				}
				total += strings.Count(string(text), "\n")
			}
		}
		total += len(s.Labels) + len(s.Annotations) + 1 + len(s.Created)
	}
	return total
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

// sameDocuments compares two streams by content rather than bytes.
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
		jx, _ := x.MarshalJSON()
		jy, _ := y.MarshalJSON()
		if !bytes.Equal(jx, jy) {
			return false
		}
	}
	return true
}

// onlyAdded reports whether the lines of before appear in after, in order,
// with only insertions between them, and how many lines were inserted.
func onlyAdded(before, after string) (added int, ok bool) {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	i := 0
	for _, line := range a {
		if i < len(b) && line == b[i] {
			i++
			continue
		}
		added++
	}
	return added, i == len(b)
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
