package inject

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// Op is what to do to the selected objects.
type Op int

// Operations.
const (
	// OpInject adds the template, replacing an older injection.
	OpInject Op = iota
	// OpUninject removes exactly what an earlier injection of the
	// injector's profile added.
	OpUninject
	// OpUninjectAll removes exactly what the earlier injections of every
	// profile added (allProfiles, --all-profiles).
	OpUninjectAll
)

// UninjectOp is the uninject of the injector's profile, or with
// allProfiles of every profile.
func UninjectOp(allProfiles bool) Op {
	if allProfiles {
		return OpUninjectAll
	}
	return OpUninject
}

// Uninjects reports whether op removes injections (of one profile or of
// every profile).
func (op Op) Uninjects() bool { return op == OpUninject || op == OpUninjectAll }

// Injector applies one template with one set of settings. It is immutable
// and safe for concurrent use.
type Injector struct {
	template  *template.Template
	hash      string
	settings  Settings // with defaults: what runs
	given     Settings // as given: what Document writes
	statusKey string
	// podSkips are the settings' pod-level skips, built once.
	podSkips []PodSkip
	renders  *yamltext.RenderCache
	derived  *derivedCache
}

// New returns an injector for template t. The settings' image override and
// native conversion are applied to the template here, so that the hash in
// every status record covers what was actually injected.
func New(t *template.Template, s Settings) (*Injector, error) {
	return newInjector(t, s, "")
}

// NewDefault is New(DefaultTemplate(), s). Without an image or native
// setting it does not hash the template: the default's hash was computed
// when the program was built (defaultTemplateHash, which
// TestDefaultTemplateCompiled holds to the hash of the text), and the
// template it reads here has been seen by no one else, so it cannot have
// been changed since.
func NewDefault(s Settings) (*Injector, error) {
	if s.Native != nil || s.Image != "" {
		return New(DefaultTemplate(), s)
	}
	return newInjector(DefaultTemplate(), s, defaultTemplateHash)
}

// newInjector is New with the hash of t, when known ("" when not).
func newInjector(t *template.Template, s Settings, hash string) (*Injector, error) {
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
		t = t.WithImage(s.Image)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if w := t.Warnings(); s.Strict && len(w) > 0 {
		return nil, fmt.Errorf("template widens privileges (strict): %s", strings.Join(w, "; "))
	}
	if hash == "" {
		hash = t.Hash()
	}
	settings := s.Default()
	return &Injector{template: t, hash: hash, settings: settings, given: s, statusKey: naming.StatusAnnotationFor(s.Profile),
		podSkips: settings.Policy.PodSkips(s.Profile), renders: &yamltext.RenderCache{}, derived: &derivedCache{}}, nil
}

// Profile returns the profile the injector injects ("" for the default).
func (in *Injector) Profile() string { return in.settings.Profile }

// StatusAnnotation returns the annotation holding the profile's record.
func (in *Injector) StatusAnnotation() string { return in.statusKey }

// Template returns the template the injector adds (after settings).
func (in *Injector) Template() *template.Template { return in.template }

// TemplateHash returns the hash recorded in status annotations.
func (in *Injector) TemplateHash() string { return in.hash }

// Settings returns the settings the injector was made with, for front ends
// that compile the same selection into another form (an admission policy).
func (in *Injector) Settings() Settings { return in.settings }

// derivedCache keeps the templates made for sets of override values, so
// that workloads asking for the same values share the template's nodes and
// with them the render cache. It stops growing at maxDerived sets.
type derivedCache struct {
	mu sync.Mutex
	m  map[string]*template.Template
}

const maxDerived = 256

// templateFor returns the template with the override values set.
func (in *Injector) templateFor(values map[string]string) *template.Template {
	if len(values) == 0 {
		return in.template
	}
	keys := slices.Sorted(maps.Keys(values))
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
	t := in.template.WithValues(values)
	if c.m == nil {
		c.m = map[string]*template.Template{}
	}
	if len(c.m) < maxDerived {
		c.m[key] = t
	}
	return t
}
