package admission

import (
	"fmt"
	"strings"
)

// jsonPatch is one CEL JSONPatch literal.
func jsonPatch(path, value string) string {
	return fmt.Sprintf("JSONPatch{op: \"add\", path: %s, value: %s}", path, value)
}

// patchExpression is the mutation: a list of JSON patches that adds what
// the core adds, in the core's places, or no patch at all when the Pod
// has a conflict (the Pod is then left as created; the validating policy
// says why).
func (c *compiler) patchExpression() string {
	parts := []string{
		// Classic sidecars go after the app's containers.
		addedList(c.itemsOf("containers"), func(it item) string {
			return jsonPatch(celString("/spec/containers/-"), it.cel)
		}),
		c.initContainerPatches(),
		// Volumes go after the app's volumes, or make the list.
		fmt.Sprintf(`(!has(object.spec.volumes) ? (size(variables.newVolumes) > 0 ? [%s] : []) : %s)`,
			jsonPatch(celString("/spec/volumes"), "variables.newVolumes"),
			addedList(c.itemsOf("volumes"), func(it item) string { return jsonPatch(celString("/spec/volumes/-"), it.cel) })),
	}
	if labels := c.labelEntries(); len(labels) > 0 {
		parts = append(parts, mapPatches("/metadata/labels", labelsExpr, labels))
	}
	annotations := append(c.annotationEntries(), entry{
		key: c.in.StatusAnnotation(), value: "variables.status", when: "true", always: true,
	})
	parts = append(parts, mapPatches("/metadata/annotations", annotationsExpr, annotations))
	return "variables.conflict != \"\" ? [] :\n" + strings.Join(parts, " +\n")
}

// initContainerPatches puts native sidecars (and any other init containers
// of the template) before the app's own init containers, in template
// order, or makes the list.
func (c *compiler) initContainerPatches() string {
	items := c.itemsOf("initContainers")
	if len(items) == 0 {
		return "[]"
	}
	inserts := make([]string, len(items))
	for i, it := range items {
		// Its index is the number of template items added before it.
		before := make([]string, i)
		for j := range before {
			before[j] = "variables." + items[j].flag
		}
		index := fmt.Sprintf(`string([%s].filter(b, b).size())`, strings.Join(before, ", "))
		if i == 0 {
			index = `"0"`
		}
		inserts[i] = fmt.Sprintf("(variables.%s ? [%s] : [])", it.flag, jsonPatch(`"/spec/initContainers/" + `+index, it.cel))
	}
	return fmt.Sprintf(`(!has(object.spec.initContainers) ? (size(variables.newInitContainers) > 0 ? [%s] : []) : %s)`,
		jsonPatch(celString("/spec/initContainers"), "variables.newInitContainers"), strings.Join(inserts, " + "))
}

// mapPatches sets entries of the labels or annotations map at path
// (mapExpr in CEL), making the map first when the Pod has none. An entry
// whose value is already there is not patched.
func mapPatches(path, mapExpr string, entries []entry) string {
	parts := []string{fmt.Sprintf("(!has(%s) ? [%s] : [])", mapExpr, jsonPatch(celString(path), "{}"))}
	for _, e := range entries {
		k := celString(e.key)
		cond := fmt.Sprintf("(%s) && (!has(%s) || !(%s in %s) || %s[%s] != %s)", e.when, mapExpr, k, mapExpr, mapExpr, k, e.value)
		if e.always {
			cond = "true"
		}
		parts = append(parts, fmt.Sprintf("(%s ? [%s] : [])", cond, jsonPatch(celString(path+"/"+jsonPointerKey(e.key)), e.value)))
	}
	return strings.Join(parts, " + ")
}
