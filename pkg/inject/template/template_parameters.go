package template

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The template's parameters bound to its items: each parameter's field
// found in the template, its default read from there.

// bindParameters checks every parameter against the template's items and
// settles its default: a declared default is written into the template
// (where the template has no value) or must equal the template's value; an
// undeclared one is the template's value.
func (t *Template) bindParameters(where string) error {
	for i := range t.Parameters {
		p := &t.Parameters[i]
		at := fmt.Sprintf("%s[%d]", nodes.JoinField(where, "parameters"), i)
		item := t.parameterItem(p.path)
		if item == nil {
			return fmt.Errorf("%s.field: %q: the template has no %s named %q", at, p.Field, strings.TrimSuffix(p.path.list, "s"), p.path.item)
		}
		current, ok := getPath(item, p.path.steps)
		switch {
		case !ok && p.Default == "\x00":
			return fmt.Errorf("%s: %q is not set in the template: give a default", at, p.Field)
		case !ok:
			if err := setPath(item, p.path.steps, p.Default, p.Type); err != nil {
				return fmt.Errorf("%s.field: %q: %w", at, p.Field, err)
			}
		case p.Default == "\x00":
			if err := p.Type.Check(current); err != nil {
				return fmt.Errorf("%s: the template's value at %q: %w", at, p.Field, err)
			}
			p.Default = current
		case current != p.Default:
			return fmt.Errorf("%s.default: %q differs from the template's value %q at %q (set one of them)", at, p.Default, current, p.Field)
		}
	}
	return nil
}

// resolveDefaults takes the defaults from the template again after
// settings changed it (an --image override).
func (t *Template) resolveDefaults() {
	t.Parameters = append([]Parameter(nil), t.Parameters...)
	for i := range t.Parameters {
		p := &t.Parameters[i]
		if item := t.parameterItem(p.path); item != nil {
			if v, ok := getPath(item, p.path.steps); ok {
				p.Default = v
			}
		}
	}
}

// parameterItem finds the item a parameter sets. A sidecar is found by name
// in containers or initContainers, so a parameter keeps working when the
// template is turned native or classic.
func (t *Template) parameterItem(p fieldPath) *yaml.Node {
	if p.list == "volumes" {
		return nodes.ItemByName(nodes.NewSequence(t.Volumes...), p.item)
	}
	if c := nodes.ItemByName(nodes.NewSequence(t.Containers...), p.item); c != nil {
		return c
	}
	return nodes.ItemByName(nodes.NewSequence(t.InitContainers...), p.item)
}

// NeedsCEL reports whether one of the template's expressions may need
// cel-go on every document: it is outside the subset the core evaluates,
// or not known to compile without cel-go (podexpr.Expression.Fast). A
// program that runs cel-go in another process (kubectl-inject) hands such
// a template to one that links it.
func (t *Template) NeedsCEL() bool {
	for _, p := range t.Parameters {
		if p.expr != nil && !p.expr.Fast() {
			return true
		}
	}
	return false
}
