package inject

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// Op is what to do to the selected objects.
type Op int

// Operations.
const (
	// OpInject adds the template, replacing an older injection.
	OpInject Op = iota
	// OpUninject removes exactly what an earlier injection added.
	OpUninject
)

// Injector applies one template with one set of settings. It is immutable
// and safe for concurrent use.
type Injector struct {
	template  *Template
	hash      string
	settings  Settings // with defaults: what runs
	given     Settings // as given: what Document writes
	statusKey string
	renders   *yamltext.RenderCache
	derived   *derivedCache
}

// New returns an injector for template t. The settings' image override and
// native conversion are applied to the template here, so that the hash in
// every status record covers what was actually injected.
func New(t *Template, s Settings) (*Injector, error) {
	if t == nil {
		return nil, fmt.Errorf("no template")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Native != nil {
		t = t.WithNative(*s.Native)
	}
	if s.Image != "" {
		t = t.withImage(s.Image)
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	if len(t.Parameters) > 0 {
		c := *t
		c.resolveDefaults()
		t = &c
	}
	if w := t.Warnings(); s.Strict && len(w) > 0 {
		return nil, fmt.Errorf("template widens privileges (strict): %s", strings.Join(w, "; "))
	}
	return &Injector{template: t, hash: t.Hash(), settings: s.Default(), given: s, statusKey: naming.StatusAnnotationFor(s.Profile), renders: &yamltext.RenderCache{}, derived: &derivedCache{}}, nil
}

// Profile returns the profile the injector injects ("" for the default).
func (in *Injector) Profile() string { return in.settings.Profile }

// StatusAnnotation returns the annotation holding the profile's record.
func (in *Injector) StatusAnnotation() string { return in.statusKey }

// Template returns the template the injector adds (after settings).
func (in *Injector) Template() *Template { return in.template }

// TemplateHash returns the hash recorded in status annotations.
func (in *Injector) TemplateHash() string { return in.hash }

// Settings returns the settings the injector was made with, for front ends
// that compile the same selection into another form (an admission policy).
func (in *Injector) Settings() Settings { return in.settings }

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
	d, entry := parseDocument(src, docIndex)
	if d == nil {
		if entry == nil {
			return src, nil
		}
		return src, []Entry{*entry}
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

// derivedCache keeps the templates made for sets of override values, so
// that workloads asking for the same values share the template's nodes and
// with them the render cache. It stops growing at maxDerived sets.
type derivedCache struct {
	mu sync.Mutex
	m  map[string]*Template
}

const maxDerived = 256

// templateFor returns the template with the override values set.
func (in *Injector) templateFor(values map[string]string) *Template {
	if len(values) == 0 {
		return in.template
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "\x00" + values[k] + "\x00")
	}
	key := b.String()
	c := in.derived
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.m[key]; ok {
		return t
	}
	t := in.template.withValues(values)
	if c.m == nil {
		c.m = map[string]*Template{}
	}
	if len(c.m) < maxDerived {
		c.m[key] = t
	}
	return t
}
