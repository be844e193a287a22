package admission

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// The pattern of a status record as record.Status.Encode writes it, built
// from the core's declared grammar (inject.StatusGrammar): a record the
// core writes is read by the policy, and a change of the record's format
// is a change of that grammar. CEL has no JSON parser, so the policy reads
// other profiles' records with regular expressions (RE2).

// Regular expressions of JSON values.
const (
	// reString is a JSON string, escapes included.
	reString = `"(?:[^"\\]|\\.)*"`
	reList   = `\[` + reString + `(?:,` + reString + `)*\]`
	reMap    = `\{` + reString + `:` + reString + `(?:,` + reString + `:` + reString + `)*\}`
	// reNonEmpty is a JSON string of one character or more.
	reNonEmpty = `"(?:[^"\\]|\\.)+"`
	// reBlank is a JSON string of blank space, one character or more.
	reBlank = `"(?:[ \t]|\\[nrt])+"`
	// statusSuffix ends a named profile's status annotation.
	statusSuffix = "." + naming.StatusAnnotation
)

// statusKeyPattern is naming.ProfileOfStatusKey: the default profile's
// key, or a DNS label before the domain.
var statusKeyPattern = `^(?:` + grammar.DNSLabelPattern + `\.)?` + regexp.QuoteMeta(naming.StatusAnnotation) + `$`

// recordPattern is the whole record as Encode writes it: fields in the
// grammar's order, empty optional ones left out. A record the core would
// parse but that is not written so (by hand, pretty-printed) is treated as
// unreadable. Built on first use: only a compiled policy needs it.
var recordPattern = sync.OnceValue(func() string {
	return "^" + objectPattern(record.Grammar()) + "$"
})

// objectPattern matches a JSON object of fields, in order, each optional
// one possibly left out.
func objectPattern(fields []record.Field) string {
	type part struct {
		pattern  string
		optional bool
	}
	parts := make([]part, len(fields))
	for i, f := range fields {
		parts[i] = part{regexp.QuoteMeta(jsonString(f.Name)) + ":" + valuePattern(f), f.Optional}
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

// valuePattern matches the value of the record field f, restricted as the
// grammar restricts it.
func valuePattern(f record.Field) string {
	switch f.Value {
	case record.Int:
		if f.Const != 0 {
			return strconv.Itoa(f.Const)
		}
		return `-?[0-9]+`
	case record.String:
		if f.NonEmpty {
			return reNonEmpty
		}
		return reString
	case record.List:
		if f.Words == nil {
			return reList
		}
		word := oneOf(f.Words)
		return `\[` + word + `(?:,` + word + `)*\]`
	case record.Map:
		key, value := reString, reString
		if f.Words != nil {
			key = oneOf(f.Words)
		}
		switch {
		case f.Values != nil:
			value = oneOf(f.Values)
		case f.Blank:
			value = reBlank
		}
		return `\{` + key + `:` + value + `(?:,` + key + `:` + value + `)*\}`
	case record.Object:
		return objectPattern(f.Fields)
	}
	panic(fmt.Sprintf("admission: status record field %q has no pattern", f.Name))
}

// oneOf matches one of words as a JSON string.
func oneOf(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = regexp.QuoteMeta(w)
	}
	return `"(?:` + strings.Join(quoted, "|") + `)"`
}

// listedPattern matches a record whose list field (or any of fields)
// holds the JSON string name.
func listedPattern(fields []string, name string) string {
	return `,"(?:` + strings.Join(fields, "|") + `)":\[(?:` + reString + `,)*` + regexp.QuoteMeta(jsonString(name)) + `[,\]]`
}

// keyOwnedPattern matches a record that added or changed the label or
// annotation key (a metadata kind of conflict): inject's owner.
func keyOwnedPattern(k inject.ConflictKind, key string) string {
	var changed record.Field
	for _, f := range record.Grammar() {
		if f.Value == record.Object {
			changed = f
		}
	}
	// The maps of "changed" written before k's may be there or not.
	var before strings.Builder
	for _, f := range changed.Fields {
		if f.Name == k.Changed {
			break
		}
		before.WriteString(`(?:` + jsonString(f.Name) + `:` + reMap + `,)?`)
	}
	entry := `\{(?:` + reString + `:` + reString + `,)*` + regexp.QuoteMeta(jsonString(key)) + `:`
	return listedPattern(k.Added, key) + "|" + jsonString(changed.Name) + `:\{` + before.String() + jsonString(k.Changed) + `:` + entry
}
