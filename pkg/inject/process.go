package inject

import (
	"errors"
	"fmt"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// ProcessNode applies op to one parsed document (an object or a kind: List)
// in place, and reports one entry per object. This is the path for callers
// that re-serialize anyway, such as KRM functions.
func (in *Injector) ProcessNode(op Op, doc *yaml.RNode, docIndex int) []Entry {
	d := &document{root: nodes.ResolveDocument(doc.YNode()), index: docIndex}
	return in.process(op, d)
}

// ProcessText applies op to the text of one YAML document and returns the
// new text: the original bytes with only the injected lines added (or
// removed). A document that is not changed is returned as is.
func (in *Injector) ProcessText(op Op, src []byte, docIndex int) ([]byte, []Entry) {
	return in.ProcessParsed(op, ParseText(src, docIndex))
}

// Parsed is the text of one document read as ProcessText reads it (the
// size limit, the parser, a mapping at the top), for ProcessParsed.
// Parsing is most of the work on a document; it uses no Injector, so a
// front end can parse the next documents on a second core while it
// processes one (manifest.ProcessAhead).
type Parsed struct {
	src    []byte
	doc    *document // nil when the document has no content or failed
	failed *Entry    // why it failed
	used   bool
}

// ParseText reads the text of document docIndex for ProcessParsed. It is
// safe to call from any goroutine.
func ParseText(src []byte, docIndex int) *Parsed {
	d, failed := parseDocument(src, docIndex)
	return &Parsed{src: src, doc: d, failed: failed}
}

// ParseDocuments is ParseText on each of docs, consecutive documents of
// a stream: the same results, with one parser shared by as many of them
// as it can read as one stream (yamltext.DecodeBatch), which saves the
// parser's set-up on each, a third of the parsing of a stream of small
// documents. It is the prepare of manifest.ProcessAhead for ProcessParsed,
// and safe to call from any goroutine.
func ParseDocuments(docs []manifest.Document) []*Parsed {
	parsed := make([]*Parsed, len(docs))
	texts := make([][]byte, 0, len(docs))
	decoded := make([]int, 0, len(docs)) // where each of texts is in docs
	for i, d := range docs {
		if len(d.Text) > MaxDocumentBytes {
			parsed[i] = ParseText(d.Text, d.Index) // refused for its size
			continue
		}
		texts = append(texts, d.Text)
		decoded = append(decoded, i)
	}
	nodes, errs := yamltext.DecodeBatch(texts)
	for k, i := range decoded {
		d, failed := decodedDocument(docs[i].Text, docs[i].Index, nodes[k], errs[k])
		parsed[i] = &Parsed{src: docs[i].Text, doc: d, failed: failed}
	}
	return parsed
}

// ProcessParsed is ProcessText on a document that ParseText read. A Parsed
// is processed once: processing edits its tree.
func (in *Injector) ProcessParsed(op Op, p *Parsed) ([]byte, []Entry) {
	if p.used {
		panic("inject: a Parsed document was processed twice")
	}
	p.used = true
	src, d := p.src, p.doc
	if d == nil {
		if p.failed == nil {
			return src, nil
		}
		return src, []Entry{*p.failed}
	}
	d.renders = in.renders
	entries := in.process(op, d)
	if d.err != nil {
		return src, failAll(entries, d.err)
	}
	if d.reformatted {
		for i := range entries {
			if entries[i].Changed() {
				entries[i].Reformatted = true
			}
		}
	}
	return d.text, entries
}

// failAll turns every changed entry into an error: the document could not
// be written, so none of its objects were changed.
func failAll(entries []Entry, err error) []Entry {
	for i := range entries {
		if entries[i].Changed() {
			entries[i].Action, entries[i].Reason, entries[i].Message = Failed, ReasonInvalidObject, err.Error()
		}
	}
	return entries
}

// plan is the decision for one object in the first pass.
type plan struct {
	entry  Entry
	strip  []yamltext.Edit // removes an earlier injection (uninject, or update)
	inject bool            // add the template in the second pass
	values map[string]string
	rest   others // the other profiles' records, read once in the first pass
}

// process runs op over every object of the document in two passes: first
// every old injection that must go is removed, then the template is added.
// Each object's edits are planned completely before any is applied, so an
// object is either fully changed or untouched.
func (in *Injector) process(op Op, d *document) []Entry {
	refs := d.objects()
	plans := make([]plan, len(refs))
	var strip []yamltext.Edit
	for i, ref := range refs {
		plans[i] = in.decide(op, ref, d.index)
		strip = append(strip, plans[i].strip...)
	}
	d.apply(strip)
	if op == OpInject {
		refs = d.objects() // the text path parsed the document again
		var add []yamltext.Edit
		blank := d.emptyInner()
		for i := range plans {
			if !plans[i].inject {
				continue
			}
			edits, err := in.planInjectObject(refs[i].node, blank, plans[i].values, plans[i].rest)
			if err != nil {
				plans[i].entry = failEntry(plans[i].entry, err)
				continue
			}
			add = append(add, edits...)
		}
		d.apply(add)
	}
	entries := make([]Entry, len(plans))
	for i := range plans {
		entries[i] = plans[i].entry
	}
	return entries
}

// decide classifies one object and plans the removal of a stale injection.
func (in *Injector) decide(op Op, ref objectRef, docIndex int) plan {
	obj := ref.node
	meta := nodes.MapValue(obj, "metadata")
	p := plan{entry: Entry{
		Document: docIndex, Item: ref.item,
		APIVersion: nodes.ScalarField(obj, "apiVersion"), Kind: nodes.ScalarField(obj, "kind"),
		Namespace: nodes.ScalarField(meta, "namespace"), Name: nodes.ScalarField(meta, "name"),
	}}
	skip := func(reason Reason, msg string) plan {
		p.entry.Action, p.entry.Reason, p.entry.Message = Skipped, reason, msg
		return p
	}
	if obj.Kind != yaml.MappingNode {
		if ref.item >= 0 {
			return skip(ReasonNotAnObject, fmt.Sprintf("item is %s, not an object; left as it is", nodes.DescribeNonObject(obj)))
		}
		return plan{entry: failEntry(p.entry, fmt.Errorf("item is a %s, not an object", nodes.Kind(obj)))}
	}
	if p.entry.Kind == "" && p.entry.APIVersion == "" {
		p.entry.Action, p.entry.Reason = Failed, ReasonNotKubernetes
		p.entry.Message = "neither apiVersion nor kind: not a Kubernetes object"
		return p
	}
	if p.entry.Kind == "" || p.entry.APIVersion == "" {
		return plan{entry: failEntry(p.entry, fmt.Errorf("%s: is required", firstMissing(p.entry)))}
	}
	path, ok := lookupPath(in.settings.PodTemplatePaths, p.entry.APIVersion, p.entry.Kind)
	if !ok {
		return skip(ReasonNotAWorkload, "")
	}
	if reason, msg := in.settings.Policy.selectObject(obj); reason != "" {
		return skip(reason, msg)
	}
	t, err := findPodTarget(obj, path)
	if err == nil {
		err = checkDuplicateKeys(obj, "")
	}
	if err == nil {
		err = checkPodSpec(t)
	}
	if err != nil {
		return plan{entry: failEntry(p.entry, err)}
	}
	records, err := readRecords(t)
	if err != nil {
		p.entry.Action, p.entry.Reason, p.entry.Message = Failed, ReasonInvalidStatus, fmt.Sprintf("%s: %v", nodes.JoinField(t.field, "metadata.annotations"), err)
		return p
	}
	profile := in.settings.Profile
	own, rest := findRecord(records, profile), others(records).without(profile)
	if op.Uninjects() {
		switch {
		case op == OpUninjectAll && len(records) > 0:
			p.strip = planUninjectAll(t, records)
		case op == OpUninjectAll || own == nil:
			return skip(ReasonNotInjected, "")
		default:
			p.strip = planUninject(t, *own, rest)
		}
		p.entry.Action = Uninjected
		return p
	}
	values, err := parameterValues(t, profile, in.template, own)
	if err != nil {
		return plan{entry: failEntry(p.entry, err)}
	}
	p.values, p.rest = values, rest
	if own != nil && own.status.Template == in.hash && sameValues(own.status.Values, values) && statusIntact(t, own.status) {
		p.entry.Action = Unchanged
		return p
	}
	if reason, msg := in.selectPod(t); reason != "" {
		return skip(reason, msg)
	}
	if in.refuseClassicForCompletion(t, &p.entry) {
		return p
	}
	p.entry.Action, p.inject = Injected, true
	if own != nil {
		p.entry.Action, p.strip = Updated, planUninject(t, *own, rest)
		if err := in.dryRunUpdate(obj, path, p.strip, values, rest); err != nil {
			return plan{entry: failEntry(p.entry, err)}
		}
	}
	return p
}

// findRecord returns profile's record among records, nil when it has none.
func findRecord(records []profileRecord, profile string) *profileRecord {
	for i := range records {
		if records[i].profile == profile {
			return &records[i]
		}
	}
	return nil
}

// dryRunUpdate checks on a copy that the new template can be injected once
// the old injection is gone, so that a failing update leaves the object as
// it was rather than stripped.
func (in *Injector) dryRunUpdate(obj *yaml.Node, path PodTemplatePath, strip []yamltext.Edit, values map[string]string, rest others) error {
	copied, mapped := copyWithMap(obj)
	remapped := make([]yamltext.Edit, len(strip))
	for i, e := range strip {
		e.Parent, e.Before, e.Target = mapped[e.Parent], mapped[e.Before], mapped[e.Target]
		remapped[i] = e
	}
	if err := yamltext.Apply(remapped); err != nil {
		return err
	}
	t, err := findPodTarget(copied, path)
	if err != nil {
		return err
	}
	_, err = in.planInject(t, values, rest)
	return err
}

// planInjectObject plans the injection into an object the first pass
// accepted; blank reads the text between empty brackets (nil on the node
// path).
func (in *Injector) planInjectObject(obj *yaml.Node, blank func(*yaml.Node) string, values map[string]string, rest others) ([]yamltext.Edit, error) {
	path, _ := lookupPath(in.settings.PodTemplatePaths, nodes.ScalarField(obj, "apiVersion"), nodes.ScalarField(obj, "kind"))
	t, err := findPodTarget(obj, path)
	if err != nil {
		return nil, err
	}
	t.blank = blank
	return in.planInject(t, values, rest)
}

func failEntry(e Entry, err error) Entry {
	e.Action, e.Reason, e.Message = Failed, ReasonInvalidObject, err.Error()
	e.Field, e.Line, e.Column = errorPosition(err)
	var conflict *conflictError
	if errors.As(err, &conflict) {
		e.Reason = ReasonConflict
	}
	return e
}

func firstMissing(e Entry) string {
	if e.APIVersion == "" {
		return "apiVersion"
	}
	return "kind"
}

// copyWithMap deep-copies a tree and maps each original node to its copy.
func copyWithMap(n *yaml.Node) (*yaml.Node, map[*yaml.Node]*yaml.Node) {
	mapped := map[*yaml.Node]*yaml.Node{}
	var walk func(*yaml.Node) *yaml.Node
	walk = func(n *yaml.Node) *yaml.Node {
		c := *n
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = walk(child)
		}
		mapped[n] = &c
		return &c
	}
	return walk(n), mapped
}

// checkDuplicateKeys rejects mappings with a key given twice: YAML parsers
// disagree on which value wins, so editing such an object would be a guess.
func checkDuplicateKeys(n *yaml.Node, field string) error {
	path, line, found := findDuplicateKey(n)
	if !found {
		return nil
	}
	name := field
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].key {
			name = nodes.JoinField(name, path[i].name)
		} else {
			name += "[" + path[i].name + "]"
		}
	}
	return fmt.Errorf("%s: duplicate key (line %d)", name, line)
}

// pathStep is one step of a field path: a mapping key or a list index.
type pathStep struct {
	name string
	key  bool
}

// findDuplicateKey finds the first key given twice in one mapping of n and
// returns its line and its path, innermost step first. Every field of every
// object goes through here, so nothing is allocated unless one is found.
func findDuplicateKey(n *yaml.Node) (path []pathStep, line int, found bool) {
	switch n.Kind {
	case yaml.MappingNode:
		var seen map[string]bool // only for large mappings (a ConfigMap's data)
		if len(n.Content) > 2*smallMapping {
			seen = make(map[string]bool, len(n.Content)/2)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if seen != nil && seen[k.Value] || seen == nil && seenBefore(n.Content[:i], k.Value) {
				return []pathStep{{k.Value, true}}, k.Line, true
			}
			if seen != nil {
				seen[k.Value] = true
			}
			if path, line, found := findDuplicateKey(n.Content[i+1]); found {
				return append(path, pathStep{k.Value, true}), line, true
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if path, line, found := findDuplicateKey(item); found {
				return append(path, pathStep{strconv.Itoa(i), false}), line, true
			}
		}
	}
	return nil, 0, false
}

// smallMapping is the number of fields up to which a scan finds a
// duplicate key faster than a map.
const smallMapping = 16

// seenBefore reports whether key is among the keys of pairs (key, value,
// key, value...).
func seenBefore(pairs []*yaml.Node, key string) bool {
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i].Value == key {
			return true
		}
	}
	return false
}

// checkPodSpec rejects pod specs whose lists are not lists of named
// items: their containers and volumes are matched by name.
func checkPodSpec(t *podTarget) error {
	for _, field := range []string{"containers", "initContainers", "volumes"} {
		list := nodes.MapValue(t.spec, field)
		if nodes.IsNull(list) || list.Kind == yaml.AliasNode {
			continue
		}
		at := t.specField(field)
		if list.Kind != yaml.SequenceNode {
			return atNode(list, at, fmt.Errorf("%s: must be a list", at))
		}
		for i, item := range list.Content {
			if item.Kind == yaml.AliasNode {
				continue
			}
			if item.Kind != yaml.MappingNode {
				return atNode(item, fmt.Sprintf("%s[%d]", at, i), fmt.Errorf("%s[%d]: must be a mapping", at, i))
			}
			if nodes.ScalarField(item, "name") == "" {
				return atNode(item, fmt.Sprintf("%s[%d].name", at, i), fmt.Errorf("%s[%d].name: is required", at, i))
			}
		}
	}
	return nil
}

// selectPod applies the injector's pod-level skips: the first that holds
// leaves the pod alone.
func (in *Injector) selectPod(t *podTarget) (Reason, string) {
	for _, s := range in.podSkips {
		if ok, matched := t.holds(s.When); ok {
			return s.Reason, s.Message(matched)
		}
	}
	return "", ""
}
