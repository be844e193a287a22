package admission

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// entry is one label or annotation the policy sets: a key, its value as a
// CEL expression, and when it applies.
type entry struct {
	key, value, when string
}

const (
	labelsExpr      = "object.metadata.labels"
	annotationsExpr = "object.metadata.annotations"
)

// labelEntries are the template's labels.
func (c *compiler) labelEntries() []entry {
	var out []entry
	for _, kv := range c.in.Template().Labels {
		out = append(out, entry{key: kv.Key, value: celString(kv.Value), when: "true"})
	}
	return out
}

// annotationEntries are the template's annotations and, when a classic
// sidecar is added to a Pod that names no default container, the
// default-container annotation naming the app's first container.
func (c *compiler) annotationEntries() []entry {
	var out []entry
	for _, kv := range c.in.Template().Annotations {
		out = append(out, entry{key: kv.Key, value: celString(kv.Value), when: "true"})
	}
	if containers := c.itemsOf("containers"); len(containers) > 0 {
		var added []string
		for _, it := range containers {
			added = append(added, "variables."+it.flag)
		}
		key := celString(inject.DefaultContainerAnnotation)
		out = append(out, entry{
			key:   inject.DefaultContainerAnnotation,
			value: "object.spec.containers[0].name",
			when: fmt.Sprintf(`(%s) && !(has(%s) && %s in %s && %s[%s] != "")`,
				strings.Join(added, " || "), annotationsExpr, key, annotationsExpr, annotationsExpr, key),
		})
	}
	return out
}

// addedExpr is true when e adds its key to the map at mapExpr.
func (e entry) addedExpr(mapExpr string) string {
	return fmt.Sprintf("(%s) && (!has(%s) || !(%s in %s))", e.when, mapExpr, celString(e.key), mapExpr)
}

// changedExpr is true when e overwrites a different value at mapExpr.
func (e entry) changedExpr(mapExpr string) string {
	k := celString(e.key)
	return fmt.Sprintf("(%s) && has(%s) && %s in %s && %s[%s] != %s", e.when, mapExpr, k, mapExpr, mapExpr, k, e.value)
}

// addStatusVariables declares the parts of the status record and the
// record itself, field for field what inject.Status.Encode writes.
func (c *compiler) addStatusVariables() {
	c.variable("newInitContainers", addedList(c.itemsOf("initContainers"), func(it item) string { return it.cel }))
	c.variable("newVolumes", addedList(c.itemsOf("volumes"), func(it item) string { return it.cel }))
	for _, m := range []struct {
		name, expr string
		entries    []entry
	}{
		{"Labels", labelsExpr, c.labelEntries()},
		{"Annotations", annotationsExpr, c.annotationEntries()},
	} {
		var added, changed []string
		for _, e := range m.entries {
			added = append(added, fmt.Sprintf("(%s ? [%s] : [])", e.addedExpr(m.expr), celString(jsonString(e.key))))
		}
		byKey := map[string]entry{}
		for _, e := range m.entries {
			byKey[e.key] = e
		}
		for _, k := range sortedKeys(byKey) { // encoding/json sorts map keys
			e := byKey[k]
			old := celJSONEscape(fmt.Sprintf("%s[%s]", m.expr, celString(k)))
			changed = append(changed, fmt.Sprintf(`(%s ? [%s + '"' + %s + '"'] : [])`, e.changedExpr(m.expr), celString(jsonString(k)+":"), old))
		}
		c.variable("added"+m.name, listOrEmpty(added))
		c.variable("changed"+m.name, listOrEmpty(changed))
	}
	c.variable("created", c.createdExpr())
	c.variable("status", c.statusExpr())
}

func listOrEmpty(parts []string) string {
	if len(parts) == 0 {
		return "[]"
	}
	return strings.Join(parts, " + ")
}

// createdExpr lists the fields injection creates, sorted as the core
// sorts them. A Pod always has containers; empty lists and maps reach
// admission as absent fields, so nothing is ever recorded as null.
func (c *compiler) createdExpr() string {
	parts := []string{
		`(!has(object.spec.initContainers) && size(variables.newInitContainers) > 0 ? ['"initContainers"'] : [])`,
		`(!has(object.metadata.annotations) ? ['"metadata.annotations"'] : [])`,
	}
	if len(c.in.Template().Labels) > 0 {
		parts = append(parts, `(!has(object.metadata.labels) ? ['"metadata.labels"'] : [])`)
	}
	parts = append(parts, `(!has(object.spec.volumes) && size(variables.newVolumes) > 0 ? ['"volumes"'] : [])`)
	return strings.Join(parts, " + ")
}

// statusExpr renders the record as inject.Status.Encode does: fields in
// struct order, empty ones left out.
func (c *compiler) statusExpr() string {
	names := func(list string) string {
		return addedList(c.itemsOf(list), func(it item) string { return celString(jsonString(it.name)) })
	}
	field := func(name, list string) string {
		return fmt.Sprintf(`(size(%s) > 0 ? ',"%s":[' + (%s).join(",") + ']' : '')`, list, name, list)
	}
	changedMap := func(name, list string) string {
		return fmt.Sprintf(`(size(%s) > 0 ? ['"%s":{' + (%s).join(",") + '}'] : [])`, list, name, list)
	}
	changed := fmt.Sprintf("(%s + %s)", changedMap("labels", "variables.changedLabels"), changedMap("annotations", "variables.changedAnnotations"))
	parts := []string{
		celString(fmt.Sprintf(`{"v":1,"template":%s`, jsonString(c.in.TemplateHash()))),
		field("containers", names("containers")),
		field("initContainers", names("initContainers")),
		field("volumes", names("volumes")),
		field("labels", "variables.addedLabels"),
		field("annotations", "variables.addedAnnotations"),
		fmt.Sprintf(`(size(%s) > 0 ? ',"changed":{' + %s.join(",") + '}' : '')`, changed, changed),
		field("created", "variables.created"),
		`"}"`,
	}
	return strings.Join(parts, " +\n")
}
