package admission

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// The pattern of a status record as inject.Status.Encode writes it,
// generated from the Status type: a record the core writes is read by the
// policy whatever fields the type gains. CEL has no JSON parser, so the
// policy reads other profiles' records with regular expressions (RE2).

// Regular expressions of JSON values.
const (
	// reString is a JSON string, escapes included.
	reString = `"(?:[^"\\]|\\.)*"`
	reList   = `\[` + reString + `(?:,` + reString + `)*\]`
	reMap    = `\{` + reString + `:` + reString + `(?:,` + reString + `:` + reString + `)*\}`
	// statusKeyPattern is inject.ProfileOfStatusKey: the default
	// profile's key, or a DNS label before the domain.
	statusKeyPattern = `^(?:[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\.)?sidecar\.kinject\.dev/status$`
	statusSuffix     = ".sidecar.kinject.dev/status"
)

// recordFields are the fields a record names in created, null and
// nullTokens, as the core names them; empty names the pod spec too.
var recordFields = []string{"containers", "initContainers", "metadata", "metadata.annotations", "metadata.labels", "volumes"}

// fieldValues are the patterns of the values that the core restricts
// beyond their JSON type, by JSON field name: the version, the field names
// and what nullTokens and empty may hold.
func fieldValues() map[string]string {
	name := func(fields []string) string {
		quoted := make([]string, len(fields))
		for i, f := range fields {
			quoted[i] = regexp.QuoteMeta(f)
		}
		return `"(?:` + strings.Join(quoted, "|") + `)"`
	}
	field, emptyField := name(recordFields), name(append([]string{"spec"}, recordFields...))
	fields := `\[` + field + `(?:,` + field + `)*\]`
	pairs := func(key, value string) string {
		return `\{` + key + `:` + value + `(?:,` + key + `:` + value + `)*\}`
	}
	return map[string]string{
		"v":          `1`,
		"template":   `"(?:[^"\\]|\\.)+"`,
		"created":    fields,
		"null":       fields,
		"nullTokens": pairs(field, `"(?:null|Null|NULL|~)"`),
		"empty":      pairs(emptyField, `"(?:[ \t]|\\[nrt])+"`),
	}
}

// recordPattern is the whole record as Encode writes it: fields in struct
// order, empty ones left out. A record the core would parse but that is
// not written so (by hand, pretty-printed) is treated as unreadable.
// Built on first use: only a compiled policy needs it.
var recordPattern = sync.OnceValue(func() string {
	return "^" + structPattern(reflect.TypeOf(inject.Status{}), fieldValues()) + "$"
})

// structPattern matches a struct of type t encoded by encoding/json:
// its fields in order, those tagged omitempty optional.
func structPattern(t reflect.Type, values map[string]string) string {
	type part struct {
		pattern  string
		optional bool
	}
	var parts []part
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		v, ok := values[name]
		if !ok {
			v = typePattern(f.Type, values)
		}
		parts = append(parts, part{regexp.QuoteMeta(jsonString(name)) + ":" + v, strings.Contains(opts, "omitempty")})
	}
	// Each field follows a comma unless it is the first written: for every
	// possible first field, the ones after it, each optional or not.
	var alts []string
	for first := range parts {
		var b strings.Builder
		b.WriteString(parts[first].pattern)
		for _, p := range parts[first+1:] {
			if p.optional {
				b.WriteString("(?:," + p.pattern + ")?")
			} else {
				b.WriteString("," + p.pattern)
			}
		}
		alts = append(alts, b.String())
		if !parts[first].optional {
			break // a required field is always first from here
		}
	}
	if len(alts) == 1 && !parts[0].optional {
		return `\{` + alts[0] + `\}`
	}
	return `\{(?:` + strings.Join(alts, "|") + `)?\}`
}

// typePattern matches a value of type t as encoding/json writes it.
func typePattern(t reflect.Type, values map[string]string) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typePattern(t.Elem(), values)
	case reflect.Struct:
		return structPattern(t, values)
	case reflect.String:
		return reString
	case reflect.Int:
		return `-?[0-9]+`
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return reList
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
			return reMap
		}
	}
	panic(fmt.Sprintf("admission: a status record field of type %s has no pattern", t))
}

// listedPattern matches a record whose list field (or any of fields)
// holds the JSON string name.
func listedPattern(fields []string, name string) string {
	return `,"(?:` + strings.Join(fields, "|") + `)":\[(?:` + reString + `,)*` + regexp.QuoteMeta(jsonString(name)) + `[,\]]`
}

// keyOwnedPattern matches a record that added or changed the label or
// annotation key (field "labels" or "annotations"): inject's keyOwner.
func keyOwnedPattern(field, key string) string {
	k := regexp.QuoteMeta(jsonString(key))
	changed := `"changed":\{"labels":\{(?:` + reString + `:` + reString + `,)*` + k + `:`
	if field == "annotations" {
		changed = `"changed":\{(?:"labels":` + reMap + `,)?"annotations":\{(?:` + reString + `:` + reString + `,)*` + k + `:`
	}
	return listedPattern([]string{field}, key) + "|" + changed
}
