package live

import (
	"encoding/json"
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// valuesOnlyBase returns what the patch of an update is computed from when
// only the override values changed (same template hash): the modified
// object with the profile's sidecar parts and record as the old values
// rendered them. The core updates by removing the old parts and adding the
// new ones; against the live object that difference would also undo what
// the server added to the stored sidecar (imagePullPolicy, a volume's
// defaultMode) and rewrite values the server normalized (a cpu limit of
// 1000m stored as 1), so the PATCH would carry the whole sidecar. From this
// base it carries only the values that changed and the record.
//
// It returns nil, and the patch is computed from the live object as for any
// other update, when the record is not the current template's, when a part
// the record lists is missing (it must be added back whole), or when the
// smaller patch would not leave the object current.
func (p *Patcher) valuesOnlyBase(ch *change, gvk schema.GroupVersionKind) []byte {
	key := p.Injector.StatusAnnotation()
	var live map[string]any
	if err := json.Unmarshal(ch.original, &live); err != nil {
		return nil
	}
	path, tmpl := findTemplate(live, nil, func(k string) bool { return k == key })
	if tmpl == nil {
		return nil
	}
	value, _, _ := unstructured.NestedString(tmpl, "metadata", "annotations", key)
	rec, err := record.Parse(key, value)
	if err != nil || rec.Template != p.Injector.TemplateHash() || !partsPresent(tmpl, rec) {
		return nil
	}
	old, err := p.renderWithValues(ch.original, path, rec.Values)
	if err != nil {
		return nil
	}
	var base map[string]any
	if err := json.Unmarshal(ch.modified, &base); err != nil {
		return nil
	}
	if !copyParts(base, old, path, rec, key) {
		return nil
	}
	data, err := json.Marshal(base)
	if err != nil {
		return nil
	}
	// The server applies the patch to the live object: the result must be
	// what the core calls current, or the full update is sent instead.
	_, patch, err := twoWay(gvk, data, ch.modified)
	if err != nil {
		return nil
	}
	patched, err := applyPatch(gvk, ch.original, patch)
	if err != nil || !p.current(patched) {
		return nil
	}
	return data
}

// renderWithValues returns the object injected with the override values
// values instead of those its annotations ask for: it is uninjected, its
// override annotations are replaced by values (on the pod template), and
// injected again.
func (p *Patcher) renderWithValues(original []byte, path []string, values map[string]string) (map[string]any, error) {
	node, err := yaml.ConvertJSONToYamlNode(string(original))
	if err != nil {
		return nil, err
	}
	if e := p.Injector.ProcessNode(inject.OpUninject, node, 0); len(e) != 1 || e[0].Action != inject.Uninjected {
		return nil, fmt.Errorf("uninject for the old values: %v", e)
	}
	data, err := node.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	profile := p.Injector.Profile()
	for _, meta := range [][]string{{"metadata"}, append(append([]string(nil), path...), "metadata")} {
		annotations, _, _ := unstructured.NestedMap(obj, append(meta, "annotations")...)
		for _, param := range p.Injector.Template().Parameters {
			delete(annotations, naming.ProfileAnnotation(profile, param.Annotation))
		}
		if len(meta) == len(path)+1 {
			if annotations == nil {
				annotations = map[string]any{}
			}
			for name, v := range values {
				annotations[naming.ProfileAnnotation(profile, name)] = v
			}
		}
		if annotations != nil {
			if err := unstructured.SetNestedMap(obj, annotations, append(meta, "annotations")...); err != nil {
				return nil, err
			}
		}
	}
	if data, err = json.Marshal(obj); err != nil {
		return nil, err
	}
	if node, err = yaml.ConvertJSONToYamlNode(string(data)); err != nil {
		return nil, err
	}
	if e := p.Injector.ProcessNode(inject.OpInject, node, 0); len(e) != 1 || e[0].Action != inject.Injected {
		return nil, fmt.Errorf("inject with the old values: %v", e)
	}
	if data, err = node.MarshalJSON(); err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(data, &out)
}

// recordLists are the lists of a pod spec a record names items of.
func recordLists(rec *record.Status) map[string][]string {
	return map[string][]string{"containers": rec.Containers, "initContainers": rec.InitContainers, "volumes": rec.Volumes}
}

// partsPresent reports whether every item the record lists is in the pod
// template.
func partsPresent(tmpl map[string]any, rec *record.Status) bool {
	for field, names := range recordLists(rec) {
		list, _, _ := unstructured.NestedSlice(tmpl, "spec", field)
		for _, name := range names {
			if itemIndex(list, name) < 0 {
				return false
			}
		}
	}
	return true
}

// copyParts replaces, in dst's pod template at path, the items rec lists
// and the record (annotation key) with src's. It reports whether every one
// was found in both.
func copyParts(dst, src map[string]any, path []string, rec *record.Status, key string) bool {
	dstTmpl, ok1, _ := unstructured.NestedMap(dst, path...)
	srcTmpl, ok2, _ := unstructured.NestedMap(src, path...)
	if len(path) == 0 {
		dstTmpl, srcTmpl, ok1, ok2 = dst, src, true, true
	}
	if !ok1 || !ok2 {
		return false
	}
	for field, names := range recordLists(rec) {
		dstList, _, _ := unstructured.NestedSlice(dstTmpl, "spec", field)
		srcList, _, _ := unstructured.NestedSlice(srcTmpl, "spec", field)
		for _, name := range names {
			i, j := itemIndex(dstList, name), itemIndex(srcList, name)
			if i < 0 || j < 0 {
				return false
			}
			dstList[i] = srcList[j]
		}
		if len(names) > 0 && unstructured.SetNestedSlice(dstTmpl, dstList, "spec", field) != nil {
			return false
		}
	}
	record, found, _ := unstructured.NestedString(srcTmpl, "metadata", "annotations", key)
	if !found || unstructured.SetNestedField(dstTmpl, record, "metadata", "annotations", key) != nil {
		return false
	}
	if len(path) == 0 {
		return true
	}
	return unstructured.SetNestedMap(dst, dstTmpl, path...) == nil
}

// itemIndex finds the item named name in a list of named items.
func itemIndex(list []any, name string) int {
	for i, item := range list {
		if m, ok := item.(map[string]any); ok && m["name"] == name {
			return i
		}
	}
	return -1
}

// current reports whether the core finds nothing to do on the serialized
// object.
func (p *Patcher) current(obj []byte) bool {
	node, err := yaml.ConvertJSONToYamlNode(string(obj))
	if err != nil {
		return false
	}
	e := p.Injector.ProcessNode(inject.OpInject, node, 0)
	return len(e) == 1 && e[0].Action == inject.Unchanged
}
