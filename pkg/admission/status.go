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
	always           bool // the status record: written whatever is there
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

// annotationEntries are the default-container annotation, first, when a
// classic sidecar is added to a Pod that names no default container (the
// app's first container that no profile added), and the template's
// annotations. The core puts the default container first so that it sits
// where any profile would put it.
func (c *compiler) annotationEntries() []entry {
	var out []entry
	if c.addsDefaultContainer() {
		out = append(out, entry{key: inject.DefaultContainerAnnotation, value: "variables.firstApp", when: "variables.setsDefaultContainer"})
	}
	for _, kv := range c.in.Template().Annotations {
		out = append(out, entry{key: kv.Key, value: celString(kv.Value), when: "true"})
	}
	return out
}

// addsDefaultContainer reports whether the template adds classic
// containers and leaves the default-container annotation to the core.
func (c *compiler) addsDefaultContainer() bool {
	for _, kv := range c.in.Template().Annotations {
		if kv.Key == inject.DefaultContainerAnnotation {
			return false
		}
	}
	return len(c.itemsOf("containers")) > 0
}

// addDefaultContainerVariables declares firstApp (the Pod's first
// container that no other profile's record lists), setsDefaultContainer
// (the policy writes the annotation) and claimsDefaultContainer (the Pod
// names a default container that another profile added: this profile
// records it as added too, so it stays until the last of them is removed).
func (c *compiler) addDefaultContainerVariables() {
	if !c.addsDefaultContainer() {
		return
	}
	var added []string
	for _, it := range c.itemsOf("containers") {
		added = append(added, "variables."+it.flag)
	}
	key := celString(inject.DefaultContainerAnnotation)
	named := fmt.Sprintf(`has(%s) && %s in %s && %s[%s] != ""`, annotationsExpr, key, annotationsExpr, annotationsExpr, key)
	apps := `object.spec.containers.map(x, x.name).filter(n, n != "" && !` + listsName("variables.sidecarNames", "n") + ")"
	c.variable("firstApp", fmt.Sprintf(`size(%s) > 0 ? %s[0] : ""`, apps, apps))
	c.variable("setsDefaultContainer", fmt.Sprintf(`(%s) && !(%s) && variables.firstApp != ""`, strings.Join(added, " || "), named))
	c.variable("claimsDefaultContainer", fmt.Sprintf(`(%s) && %s && size(%s) > 0`,
		strings.Join(added, " || "), named, ownersExpr(keyOwnedPattern("annotations", inject.DefaultContainerAnnotation))))
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
	c.addDefaultContainerVariables()
	for _, m := range []struct {
		name, expr string
		entries    []entry
	}{
		{"Labels", labelsExpr, c.labelEntries()},
		{"Annotations", annotationsExpr, c.annotationEntries()},
	} {
		var added, changed []string
		if m.name == "Annotations" && c.addsDefaultContainer() {
			added = append(added, fmt.Sprintf("(variables.claimsDefaultContainer ? [%s] : [])", celString(jsonString(inject.DefaultContainerAnnotation))))
		}
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
	c.addFieldVariables()
	c.variable("status", c.statusExpr())
}

func listOrEmpty(parts []string) string {
	if len(parts) == 0 {
		return "[]"
	}
	return strings.Join(parts, " + ")
}

// fieldChange says, for one field a record may list as created or null,
// when this profile creates it and when it adds to it where it exists
// ("" for never).
type fieldChange struct {
	field, creates, addsTo string
}

// fieldChanges are the record's fields in the core's (sorted) order. A
// Pod always has containers and metadata; empty lists and maps reach
// admission as absent fields, so this profile never records a field as
// null itself: only another profile's record can say it was.
func (c *compiler) fieldChanges() []fieldChange {
	anyContainer := make([]string, 0)
	for _, it := range c.itemsOf("containers") {
		anyContainer = append(anyContainer, "variables."+it.flag)
	}
	out := []fieldChange{
		{field: "containers", addsTo: strings.Join(anyContainer, " || ")},
		{field: "initContainers",
			creates: `!has(object.spec.initContainers) && size(variables.newInitContainers) > 0`,
			addsTo:  `has(object.spec.initContainers) && size(variables.newInitContainers) > 0`},
		{field: "metadata", addsTo: "true"},
		{field: "metadata.annotations", creates: `!has(object.metadata.annotations)`, addsTo: `has(object.metadata.annotations)`},
		{field: "metadata.labels"},
		{field: "volumes",
			creates: `!has(object.spec.volumes) && size(variables.newVolumes) > 0`,
			addsTo:  `has(object.spec.volumes) && size(variables.newVolumes) > 0`},
	}
	if len(c.in.Template().Labels) > 0 {
		out[4].creates, out[4].addsTo = `!has(object.metadata.labels)`, `has(object.metadata.labels)`
	}
	if len(c.itemsOf("initContainers")) == 0 {
		out[1].creates, out[1].addsTo = "", ""
	}
	if len(c.itemsOf("volumes")) == 0 {
		out[5].creates, out[5].addsTo = "", ""
	}
	return out
}

// addFieldVariables declares created, nulled and nullTokens: the record's
// lists of fields this profile created, or that another profile's record
// lists as created or null and this profile adds to (inject's
// others.inherit), so that every profile's record is the same whatever the
// order of injection.
func (c *compiler) addFieldVariables() {
	var created, nulled, tokens []string
	for i, f := range c.fieldChanges() {
		name := celString(jsonString(f.field))
		cond := f.creates
		if f.addsTo != "" {
			inh := fmt.Sprintf("inherit%d", i)
			list := inheritList(f.field)
			c.variable(inh, fmt.Sprintf(`!(%s) ? "" : size(%s) > 0 ? %s[0] : ""`, f.addsTo, list, list))
			v := "variables." + inh
			if cond != "" {
				cond = "(" + cond + ") || "
			}
			cond += v + ` == "c"`
			nulled = append(nulled, fmt.Sprintf(`(%s.startsWith("n") ? [%s] : [])`, v, name))
			tokens = append(tokens, fmt.Sprintf(`(%s.size() > 1 ? [%s + '"' + %s.substring(1) + '"'] : [])`, v, celString(jsonString(f.field)+":"), v))
		}
		if cond != "" {
			created = append(created, fmt.Sprintf("(%s ? [%s] : [])", cond, name))
		}
	}
	c.variable("created", listOrEmpty(created))
	c.variable("nulled", listOrEmpty(nulled))
	c.variable("nullTokens", listOrEmpty(tokens))
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
		field("null", "variables.nulled"),
		`(size(variables.nullTokens) > 0 ? ',"nullTokens":{' + variables.nullTokens.join(",") + '}' : '')`,
		c.valuesField(),
		`"}"`,
	}
	return strings.Join(parts, " +\n")
}
