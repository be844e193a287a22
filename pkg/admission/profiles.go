package admission

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Other profiles' records on the Pod (injected at build time, or by another
// profile's policy earlier in the admission chain) are read as the core
// reads them: what they list cannot be taken, fields they created are
// created for this profile too, and the default-container annotation is
// shared. CEL has no JSON parser, so the records are matched as the compact
// JSON inject.Status.Encode writes, whose field order is fixed.

// Regular expressions (RE2) over a record's JSON.
const (
	// reString is a JSON string, escapes included.
	reString = `"(?:[^"\\]|\\.)*"`
	reList   = `\[` + reString + `(?:,` + reString + `)*\]`
	reMap    = `\{` + reString + `:` + reString + `(?:,` + reString + `:` + reString + `)*\}`
	reFields = `"(?:containers|initContainers|volumes|metadata|metadata\.labels|metadata\.annotations)"`
	reTokens = `\{` + reFields + `:"(?:null|Null|NULL|~)"(?:,` + reFields + `:"(?:null|Null|NULL|~)")*\}`
	// statusKeyPattern is inject.ProfileOfStatusKey: the default
	// profile's key, or a DNS label before the domain.
	statusKeyPattern = `^(?:[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\.)?sidecar\.kinject\.dev/status$`
	statusSuffix     = ".sidecar.kinject.dev/status"
)

// recordPattern is the whole record as Encode writes it: fields in struct
// order, empty ones left out. A record the core would parse but that is
// not written so (by hand, pretty-printed) is treated as unreadable.
var recordPattern = `^\{"v":1,"template":"(?:[^"\\]|\\.)+"` +
	`(?:,"containers":` + reList + `)?(?:,"initContainers":` + reList + `)?(?:,"volumes":` + reList + `)?` +
	`(?:,"labels":` + reList + `)?(?:,"annotations":` + reList + `)?` +
	`(?:,"changed":\{(?:"labels":` + reMap + `)?,?(?:"annotations":` + reMap + `)?\})?` +
	`(?:,"created":\[` + reFields + `(?:,` + reFields + `)*\])?(?:,"null":\[` + reFields + `(?:,` + reFields + `)*\])?` +
	`(?:,"nullTokens":` + reTokens + `)?(?:,"values":` + reMap + `)?\}$`

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

// addOtherVariables declares the other profiles' records:
//
//   - otherKeys: their annotation keys;
//   - badRecord: the first that is not a record as the core writes it,
//     "" when all are;
//   - others: for each, [the profile as the core names it in messages, the
//     record, the JSON of its containers and initContainers lists];
//   - sidecarNames: those lists of every other record, joined.
func (c *compiler) addOtherVariables() {
	own := celString(c.in.StatusAnnotation())
	c.variable("otherKeys", fmt.Sprintf("has(%s) ? %s.filter(k, k != %s && k.matches(%s)) : []",
		annotationsExpr, annotationsExpr, own, celString(statusKeyPattern)))
	c.variable("badRecord", fmt.Sprintf("variables.otherKeys.filter(k, !%s[k].matches(%s))", annotationsExpr, celString(recordPattern)))
	lists := func(field string) string {
		return fmt.Sprintf("%s[k].find(%s)", annotationsExpr, celString(`,"`+field+`":`+reList))
	}
	// inject.ProfileName of the record's profile.
	display := fmt.Sprintf(`string(k) == %s ? %s : 'profile "' + string(k).substring(0, string(k).size() - %d) + '"'`,
		celString(inject.StatusAnnotation), celString(inject.ProfileName("")), len(statusSuffix))
	c.variable("others", fmt.Sprintf("variables.otherKeys.map(k, [%s, string(%s[k]), string(%s + %s)])",
		display, annotationsExpr, lists("containers"), lists("initContainers")))
	c.variable("sidecarNames", `variables.others.map(o, o[2]).join("")`)
}

// ownersExpr lists the profiles (as named in messages) whose records
// match the regular expression re.
func ownersExpr(re string) string {
	return fmt.Sprintf("variables.others.filter(o, o[1].matches(%s)).map(o, o[0])", celString(re))
}

// listsName is true when the JSON lists text (CEL) holds the name (CEL
// string expression), a Pod's container name.
func listsName(text, name string) string {
	return fmt.Sprintf(`(%s.contains('"' + %s + '",') || %s.contains('"' + %s + '"]'))`, text, name, text, name)
}

// profileConflict is the core's message when another profile owns what
// this one would add: what names the thing, owner is a CEL expression
// giving the owner's name as inject.ProfileName does.
func (c *compiler) profileConflict(what, owner string) string {
	const marker = "\x00owner\x00"
	before, after, _ := strings.Cut(inject.ProfileConflict(what, marker, c.profile), marker)
	return fmt.Sprintf("%s + %s + %s", celString(before), owner, celString(after))
}

// recordFields are the fields a record lists as created or null, sorted
// as the core sorts them.
var recordFields = []string{"containers", "initContainers", "metadata", "metadata.annotations", "metadata.labels", "volumes"}

// inheritList is a CEL list telling how the other records that created
// or filled field did so, the first one first (inject's others.inherit):
// "c" (created), "n" (it was null) or "n" followed by the null token it
// recorded.
func inheritList(field string) string {
	f := regexp.QuoteMeta(jsonString(field))
	token := fmt.Sprintf(`r.find(%s).find(%s)`, celString(`,"nullTokens":\{[^}]*\}`), celString(f+`:"[^"]*"`))
	return fmt.Sprintf(`variables.others.map(o, o[1]).filter(r, r.matches(%s)).map(r, r.matches(%s) ? "c" : "n" + (%s != "" ? %s.substring(%d, %s.size() - 1) : ""))`,
		celString(`,"(?:created|null)":\[[^\]]*`+f), celString(`,"created":\[[^\]]*`+f), token, token, len(jsonString(field))+2, token)
}
