package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// MaxDocumentBytes bounds one document. The API server stores objects of at
// most about 1.5 MiB, so a larger document is not a manifest; refusing it
// keeps memory bounded.
const MaxDocumentBytes = 8 << 20

// document is one YAML document being processed: its tree and, on the text
// path, its text. Edits are applied to both so later passes see positions
// that match the text.
type document struct {
	node        *yaml.Node // the DocumentNode (text path only)
	root        *yaml.Node // the document's content
	text        []byte     // nil on the node path
	index       int
	reformatted bool
	err         error // set when the document could not be rewritten
	renders     *yamltext.RenderCache
	stale       bool // text was spliced; root must be parsed again before use
}

// objectRef is one object in a document: the root, or an item of a List.
type objectRef struct {
	node *yaml.Node
	item int
}

// parseDocument parses one document's text. It returns a nil document for
// empty documents (and for errors, with an entry saying why).
func parseDocument(src []byte, index int) (*document, *Entry) {
	if len(src) > MaxDocumentBytes {
		return nil, failedDocument(index, ReasonTooLarge, "document is %.1f MiB, larger than the %d MiB limit for one object", float64(len(src))/(1<<20), MaxDocumentBytes>>20)
	}
	node, err := yamltext.Decode(src)
	return decodedDocument(src, index, node, err)
}

// failedDocument is the entry of document index, which failed.
func failedDocument(index int, reason Reason, format string, args ...any) *Entry {
	return &Entry{Document: index, Item: -1, Action: Failed, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// decodedDocument is parseDocument on src, which yamltext.Decode read as
// node or failed to read with err.
func decodedDocument(src []byte, index int, node *yaml.Node, err error) (*document, *Entry) {
	if err != nil {
		return nil, failedDocument(index, ReasonInvalidYAML, "not valid YAML: %v", err)
	}
	if node == nil {
		return nil, nil
	}
	root := nodes.ResolveDocument(node)
	if root.Kind != yaml.MappingNode {
		return nil, failedDocument(index, ReasonInvalidObject, "document is a %s, not an object (a mapping with apiVersion and kind)", nodes.Kind(root))
	}
	return &document{node: node, root: root, text: src, index: index}, nil
}

// ParseDocument parses the text of one document as ProcessText reads it:
// an error for text that holds more than one document, and a nil node for
// a document with no content. Front ends that convert ProcessText's output
// read it with this, so that they accept exactly what it accepts.
func ParseDocument(src []byte) (*yaml.RNode, error) {
	node, err := yamltext.Decode(src)
	if err != nil || node == nil {
		return nil, err
	}
	return yaml.NewRNode(node), nil
}

// objects lists the document's objects: its items when it is a List.
func (d *document) objects() []objectRef {
	d.refresh()
	if isList(d.root) {
		items := nodes.MapValue(d.root, "items").Content
		refs := make([]objectRef, len(items))
		for i, item := range items {
			refs[i] = objectRef{node: item, item: i}
		}
		return refs
	}
	return []objectRef{{node: d.root, item: -1}}
}

// DocumentObject is one object of a document as ProcessText reads it:
// the document's root, or an item of a List (Item counts from 0; -1 for
// the root).
type DocumentObject struct {
	Node *yaml.RNode
	Item int
}

// Objects reads the text of document index as ProcessText does (size
// limit, parser, a mapping at the top) and returns its objects: the root,
// or each item of a List. A document that cannot be read gives the failed
// entry that ProcessText reports for it; one with no content gives
// neither.
func Objects(src []byte, index int) ([]DocumentObject, *Entry) {
	d, failed := parseDocument(src, index)
	if d == nil {
		return nil, failed
	}
	refs := d.objects()
	out := make([]DocumentObject, len(refs))
	for i, r := range refs {
		out[i] = DocumentObject{Node: yaml.NewRNode(r.node), Item: r.item}
	}
	return out, nil
}

// emptyInner returns the reader of what is between the brackets of empty
// collections that injected items replace (yamltext.EmptyInner), for the
// planner to record; nil on the node path.
func (d *document) emptyInner() func(*yaml.Node) string {
	if d.text == nil || d.err != nil {
		return nil
	}
	return yamltext.EmptyInner(d.text)
}

// apply applies edits to the document. On the text path the text is
// spliced; a splice that relied on more than the plain indentation rules is
// parsed again and compared with the edited tree, and one that is
// impossible or would not mean the same falls back to re-serializing the
// document. After a sure splice the tree is parsed again only if a later
// pass asks for it.
func (d *document) apply(edits []yamltext.Edit) {
	if len(edits) == 0 || d.err != nil {
		return
	}
	if d.text == nil {
		d.err = yamltext.Apply(edits)
		return
	}
	spliced, sure, spliceErr := yamltext.Splice(d.text, edits, d.renders)
	if spliceErr == nil && sure {
		// The tree is parsed again from the text if a later pass needs it.
		d.text, d.stale = spliced, true
		return
	}
	// The edited tree is the reference for the check and the fallback.
	if err := yamltext.Apply(edits); err != nil {
		d.err = err
		return
	}
	if spliceErr == nil {
		if node, err := yamltext.Decode(spliced); err == nil && node != nil && yamltext.Equal(nodes.ResolveDocument(node), d.root) {
			d.node, d.root, d.text = node, nodes.ResolveDocument(node), spliced
			return
		}
	}
	d.reformat()
}

// refresh parses the text again after a sure splice, so that positions
// match the text.
func (d *document) refresh() {
	if !d.stale {
		return
	}
	d.stale = false
	node, err := yamltext.Decode(d.text)
	if err != nil || node == nil {
		d.err = fmt.Errorf("spliced document does not parse: %v", err)
		return
	}
	d.node, d.root = node, nodes.ResolveDocument(node)
}

// reformat re-serializes the edited tree, keeping the sequence indentation
// style and line ends of the original; JSON stays JSON, indented as the
// input was.
func (d *document) reformat() {
	style := yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(string(d.text)))
	out, err := yaml.MarshalWithOptions(d.node, &yaml.EncoderOptions{SeqIndent: style})
	if err == nil && json.Valid(d.text) {
		out, err = reformatJSON(d.node, d.text)
	}
	if err != nil {
		d.err = fmt.Errorf("re-serializing document: %w", err)
		return
	}
	if bytes.Contains(d.text, []byte("\r\n")) {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
	}
	node, err := yamltext.Decode(out)
	if err != nil || node == nil {
		d.err = fmt.Errorf("re-serialized document does not parse: %v", err)
		return
	}
	d.node, d.root, d.text, d.reformatted = node, nodes.ResolveDocument(node), out, true
}

// reformatJSON writes the tree as JSON laid out as src: compact, or
// indented by src's unit.
func reformatJSON(node *yaml.Node, src []byte) ([]byte, error) {
	var v any
	if err := node.Decode(&v); err != nil {
		return nil, err
	}
	compact, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(src), "\r\n", "\n"), "\r", "\n")
	lines := strings.SplitN(strings.TrimSpace(text), "\n", 3)
	if len(lines) < 2 {
		return append(compact, '\n'), nil
	}
	var buf bytes.Buffer
	unit := lines[1][:len(lines[1])-len(strings.TrimLeft(lines[1], " \t"))]
	if err := json.Indent(&buf, compact, "", unit); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
