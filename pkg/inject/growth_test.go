package inject_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/template"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// The number of lines an injection adds, as the status records and the
// template account for it.

// statusRecords returns the status records of a document's output.
func statusRecords(t *testing.T, doc string) []*record.Status {
	t.Helper()
	n, err := inject.ParseDocument([]byte(doc))
	if err != nil || n == nil {
		return nil
	}
	var out []*record.Status
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i].Value; strings.HasSuffix(k, naming.StatusAnnotation) {
					s, err := record.Parse(k, n.Content[i+1].Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, s)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n.YNode())
	return out
}

// templateItems returns the template's containers and volumes by name.
func templateItems(tpl *template.Template) map[string]*yaml.Node {
	items := map[string]*yaml.Node{}
	for _, list := range [][]*yaml.Node{tpl.Containers, tpl.InitContainers, tpl.Volumes} {
		for _, n := range list {
			items[yaml.NewRNode(n).Field("name").Value.YNode().Value] = n
		}
	}
	return items
}

// expectedYAMLGrowth counts the lines an injection into block YAML must
// add: each added item's own lines, one line per added label or
// annotation and for the status record, and one per field created.
func expectedYAMLGrowth(t *testing.T, tpl *template.Template, records []*record.Status) int {
	t.Helper()
	items := templateItems(tpl)
	total := 0
	for _, s := range records {
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

// expectedJSONGrowth counts the lines an injection into indented JSON
// must add: each added item's lines as encoding/json indents it, one line
// per added label or annotation and for the status record, two per field
// created (it opens and closes), one per collection or null opened across
// lines (its closing line), and for an empty collection whose inside held
// line ends, one less per line end (the record keeps them; the closing
// line is the one it had).
func expectedJSONGrowth(t *testing.T, tpl *template.Template, records []*record.Status, splits int) int {
	t.Helper()
	items := templateItems(tpl)
	total := splits
	for _, s := range records {
		for _, names := range [][]string{s.Containers, s.InitContainers, s.Volumes} {
			for _, name := range names {
				var v any
				if err := items[name].Decode(&v); err != nil {
					t.Fatal(err)
				}
				text, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				total += bytes.Count(text, []byte("\n")) + 1
			}
		}
		total += len(s.Labels) + len(s.Annotations) + 1 + 2*len(s.Created)
		for _, inside := range s.Empty {
			if n := strings.Count(inside, "\n"); n > 0 {
				total += 1 - n
			}
		}
	}
	return total
}

// emptyInside is an empty collection with blank space inside.
var emptyInside = regexp.MustCompile(`([\[{])\s+([\]}])`)

// isLaidOutJSON reports whether doc is indented JSON laid out as
// encoding/json lays it out, but for blank space inside empty collections:
// every collection with items then spans lines.
func isLaidOutJSON(doc string) bool {
	doc = strings.ReplaceAll(doc, "\r\n", "\n")
	if !json.Valid([]byte(doc)) || !strings.Contains(strings.TrimSpace(doc), "\n") {
		return false
	}
	collapsed := emptyInside.ReplaceAllString(doc, "$1$2")
	lines := strings.SplitN(collapsed, "\n", 3)
	unit := lines[1][:len(lines[1])-len(strings.TrimLeft(lines[1], " \t"))]
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(strings.TrimRight(collapsed, "\n")), "", unit); err != nil {
		return false
	}
	return buf.String() == strings.TrimRight(collapsed, "\n")
}
