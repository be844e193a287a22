package live

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// change is the core's verdict on one object: the object before and after,
// both serialized the same way so that their difference is only the
// injection.
type change struct {
	entry              inject.Entry
	original, modified []byte
	// base, when set, is what the patch is computed from instead of
	// original: for a change of override values only (see values.go).
	base []byte
	// node is the object after the change, as the core left it.
	node *yaml.RNode
}

// compute runs the core on a copy of obj.
func (p *Patcher) compute(obj *unstructured.Unstructured) (*change, error) {
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	node, err := yaml.ConvertJSONToYamlNode(string(data))
	if err != nil {
		return nil, fmt.Errorf("convert object: %w", err)
	}
	ch := &change{node: node}
	if ch.original, err = node.MarshalJSON(); err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	entries := p.Injector.ProcessNode(p.Op, node, 0)
	if len(entries) != 1 {
		return nil, fmt.Errorf("the injector reported %d objects for one", len(entries))
	}
	ch.entry = entries[0]
	if ch.modified, err = node.MarshalJSON(); err != nil {
		return nil, fmt.Errorf("encode injected object: %w", err)
	}
	if p.Op == inject.OpInject && ch.entry.Action == inject.Updated {
		ch.base = p.valuesOnlyBase(ch, obj.GroupVersionKind())
	}
	return ch, nil
}

// object returns the modified object.
func (ch *change) object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(ch.modified); err != nil {
		return nil, fmt.Errorf("decode injected object: %w", err)
	}
	return u, nil
}

// builtin reports whether gvk is a kind compiled into client-go, whose
// strategic merge patch metadata is known.
func builtin(gvk schema.GroupVersionKind) bool { return scheme.Scheme.Recognizes(gvk) }

// patch computes the patch from original (or base) to modified: strategic
// merge for built-in kinds, JSON merge otherwise, guarded by
// resourceVersion.
func (ch *change) patch(gvk schema.GroupVersionKind, resourceVersion string) (types.PatchType, []byte, error) {
	from := ch.original
	if ch.base != nil {
		from = ch.base
	}
	pt, data, err := twoWay(gvk, from, ch.modified)
	if err != nil {
		return "", nil, fmt.Errorf("compute patch: %w", err)
	}
	data, err = withResourceVersion(data, resourceVersion)
	return pt, data, err
}

// twoWay computes the patch from one serialized object to another.
func twoWay(gvk schema.GroupVersionKind, from, to []byte) (types.PatchType, []byte, error) {
	if builtin(gvk) {
		typed, _ := scheme.Scheme.New(gvk)
		data, err := strategicpatch.CreateTwoWayMergePatch(from, to, typed)
		return types.StrategicMergePatchType, data, err
	}
	data, err := jsonpatch.CreateMergePatch(from, to)
	return types.MergePatchType, data, err
}

// applyPatch applies a patch twoWay computed to a serialized object, as
// the server would.
func applyPatch(gvk schema.GroupVersionKind, obj, patch []byte) ([]byte, error) {
	if builtin(gvk) {
		typed, _ := scheme.Scheme.New(gvk)
		return strategicpatch.StrategicMergePatch(obj, patch, typed)
	}
	return jsonpatch.MergePatch(obj, patch)
}

// withResourceVersion makes the patch apply only to the version read.
func withResourceVersion(patch []byte, rv string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, fmt.Errorf("decode patch: %w", err)
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	md["resourceVersion"] = rv
	return json.Marshal(m)
}

// apply sends a server-side apply holding only the injected fields of
// every profile still injected (none, after uninjecting the last one), so
// the field manager owns exactly what it added: one manager serves every
// profile, and an apply that left out another profile's fields would
// remove them.
func (p *Patcher) apply(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, ch *change, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	body, err := applyBody(obj, ch, p.Op)
	if err != nil {
		return nil, err
	}
	opts.Force = &p.ForceConflicts
	return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts)
}

// applyBody builds the apply configuration: the object's identity plus,
// at its pod template, the containers, init containers, volumes, labels
// and annotations that the status records of the modified object list,
// whatever their profile.
func applyBody(obj *unstructured.Unstructured, ch *change, op inject.Op) ([]byte, error) {
	body := map[string]any{
		"apiVersion": obj.GetAPIVersion(),
		"kind":       obj.GetKind(),
		"metadata":   map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace()},
	}
	var modified map[string]any
	if err := json.Unmarshal(ch.modified, &modified); err != nil {
		return nil, fmt.Errorf("decode injected object: %w", err)
	}
	path, tmpl := findTemplate(modified, nil, anyRecord)
	if tmpl == nil {
		if op.Uninjects() {
			// Nothing injected is left: owning nothing removes it all.
			return json.Marshal(body)
		}
		return nil, fmt.Errorf("no pod template carries a status record after injection")
	}
	part, err := injectedParts(tmpl)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 {
		for k, v := range part {
			body[k] = mergeMetadata(body[k], v)
		}
	} else if err := unstructured.SetNestedField(body, part, path...); err != nil {
		return nil, fmt.Errorf("build apply configuration: %w", err)
	}
	return json.Marshal(body)
}

// injectedParts picks from a pod template what its status records list,
// the records themselves included.
func injectedParts(tmpl map[string]any) (map[string]any, error) {
	annotations, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "annotations")
	labels, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "labels")
	var labelKeys, annotationKeys []string
	names := map[string][]string{}
	for key, value := range annotations {
		if _, ok := naming.ProfileOfStatusKey(key); !ok {
			continue
		}
		st, err := record.Parse(key, value)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		labelKeys = append(append(labelKeys, st.Labels...), changedKeys(st, false)...)
		annotationKeys = append(append(append(annotationKeys, key), st.Annotations...), changedKeys(st, true)...)
		names["containers"] = append(names["containers"], st.Containers...)
		names["initContainers"] = append(names["initContainers"], st.InitContainers...)
		names["volumes"] = append(names["volumes"], st.Volumes...)
	}
	part := map[string]any{}
	setPicked(part, pickKeys(labels, labelKeys), "metadata", "labels")
	setPicked(part, pickKeys(annotations, annotationKeys), "metadata", "annotations")
	for field, want := range names {
		list, _, _ := unstructured.NestedSlice(tmpl, "spec", field)
		if picked := pickNamed(list, want); len(picked) > 0 {
			if err := unstructured.SetNestedSlice(part, picked, "spec", field); err != nil {
				return nil, fmt.Errorf("build apply configuration: %w", err)
			}
		}
	}
	return part, nil
}

// findTemplate finds the mapping whose annotations hold a key that match
// accepts (a status record).
func findTemplate(m map[string]any, path []string, match func(key string) bool) ([]string, map[string]any) {
	if annotations, ok, _ := unstructured.NestedStringMap(m, "metadata", "annotations"); ok {
		for k, v := range annotations {
			if v != "" && match(k) {
				return path, m
			}
		}
	}
	for k, v := range m {
		if k == "metadata" || k == "status" {
			continue
		}
		if child, ok := v.(map[string]any); ok {
			if p, t := findTemplate(child, append(append([]string(nil), path...), k), match); t != nil {
				return p, t
			}
		}
	}
	return nil, nil
}

// anyRecord matches the status annotation of any profile.
func anyRecord(key string) bool {
	_, ok := naming.ProfileOfStatusKey(key)
	return ok
}

func changedKeys(st *record.Status, annotations bool) []string {
	if st.Changed == nil {
		return nil
	}
	src := st.Changed.Labels
	if annotations {
		src = st.Changed.Annotations
	}
	keys := make([]string, 0, len(src))
	for k := range src {
		keys = append(keys, k)
	}
	return keys
}

func pickKeys(m map[string]string, keyLists ...[]string) map[string]any {
	out := map[string]any{}
	for _, keys := range keyLists {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				out[k] = v
			}
		}
	}
	return out
}

func setPicked(dst, picked map[string]any, fields ...string) {
	if len(picked) > 0 {
		_ = unstructured.SetNestedMap(dst, picked, fields...)
	}
}

func pickNamed(list []any, names []string) []any {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []any
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && want[fmt.Sprint(m["name"])] {
			out = append(out, item)
		}
	}
	return out
}

// mergeMetadata merges a pod's picked metadata into the identity metadata.
func mergeMetadata(identity, picked any) any {
	im, ok1 := identity.(map[string]any)
	pm, ok2 := picked.(map[string]any)
	if !ok1 || !ok2 {
		return picked
	}
	for k, v := range pm {
		im[k] = v
	}
	return im
}

// stillInjected reports whether obj still carries what an uninject meant
// to remove: the injector's profile's record, or with OpUninjectAll any
// record.
func stillInjected(op inject.Op, in *inject.Injector, obj *unstructured.Unstructured) bool {
	match := anyRecord
	if op != inject.OpUninjectAll {
		key := in.StatusAnnotation()
		match = func(k string) bool { return k == key }
	}
	_, t := findTemplate(obj.Object, nil, match)
	return t != nil
}
