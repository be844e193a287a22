package inject

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The values of a template's parameters for one object: its override
// annotations, checked, and its expressions, computed over its pod
// template.

// parameterValues reads the parameters' annotations from the object and
// its pod template (the pod template's win) and checks them, and computes
// the expressions of the parameters whose annotation is not set, over the
// pod template without what own (the profile's record, nil when none)
// says was injected. It returns the annotations that are set and the
// values of expressions that are not null, by parameter name.
func parameterValues(t *podTarget, profile string, tpl *template.Template, own *profileRecord) (map[string]string, error) {
	params := tpl.Parameters
	if len(params) == 0 {
		return nil, nil
	}
	objMeta := nodes.MapValue(t.obj, "metadata")
	var values map[string]string
	var pod *podexpr.Pod
	for _, p := range params {
		key := naming.ProfileAnnotation(profile, p.Annotation)
		where, v := nodes.JoinField(t.field, "metadata.annotations"), nodes.MapValue(nodes.MapValue(t.meta, "annotations"), key)
		if v == nil && t.obj != t.template {
			where, v = "metadata.annotations", nodes.MapValue(nodes.MapValue(objMeta, "annotations"), key)
		}
		if v == nil && p.Computed() {
			if pod == nil {
				pod = expressionPod(t, own)
			}
			value, err := p.Compute(pod)
			if errors.Is(err, template.ErrNoValue) {
				continue // the default, as without an expression
			}
			if err != nil {
				// The template holds the expression: naming its parameter
				// and field finds it, and keeps the message short.
				return nil, fmt.Errorf("parameters: %s: %s: expression: %w", p.Annotation, p.Field, err)
			}
			if values == nil {
				values = map[string]string{}
			}
			values[p.Annotation] = value
			continue
		}
		if v == nil {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s[%q]: must be a string", where, key)
		}
		if err := p.Type.Check(v.Value); err != nil {
			return nil, errors.New(message(MessageBadOverride, where, strconv.Quote(key), strconv.Quote(v.Value), p.Type.Example(), p.Field))
		}
		if err := checkOverridePort(tpl, p, where, key, v.Value); err != nil {
			return nil, err
		}
		if values == nil {
			values = map[string]string{}
		}
		values[p.Annotation] = v.Value
	}
	return values, nil
}

// sameValues reports whether two override sets are equal.
func sameValues(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// expressionPod is the pod template t as its expressions read it: without
// what own (the profile's record, nil when there is none) says was
// injected, so that an update computes what the first injection did.
func expressionPod(t *podTarget, own *profileRecord) *podexpr.Pod {
	pod := &podexpr.Pod{Meta: t.meta, Spec: t.spec}
	if own != nil {
		s := own.status
		pod.Own = &podexpr.Own{
			Items: map[string][]string{"containers": s.Containers, "initContainers": s.InitContainers, "volumes": s.Volumes},
			Keys:  map[string][]string{"labels": s.Labels, "annotations": append([]string{own.key}, s.Annotations...)},
		}
	}
	return pod
}
