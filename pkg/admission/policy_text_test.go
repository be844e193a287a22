package admission_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
	"sigs.k8s.io/yaml"
)

// deadFragments are CEL that does nothing: what the expression builder
// folds away.
var deadFragments = regexp.MustCompile(`\btrue &&|&& true\b|\bfalse \|\||\|\| false\b|\[\] \+|\+ \[\]( |$)|\(true \?|\(false \?|!\(true\)|!\(false\)|\? \[\] : \[\]|(?:^|[ (,\[])"" \+|\+ ""(?:$|[ ),\]])|!!`)

// positional are variable names that say where they are, not what they
// hold (c0, p5, inherit3).
var positional = regexp.MustCompile(`^[a-z]+[0-9]+$`)

// TestPolicyText holds every compiled policy (the suites' and the
// golden corpus's configs) to what a reviewer reads: no dead fragments,
// every variable named for what it holds, said in a comment, and used.
func TestPolicyText(t *testing.T) {
	t.Parallel()
	configs := map[string]string{}
	for _, s := range podgen.Suites() {
		configs[s.Name] = s.Config
		for i, o := range s.Others {
			configs[s.Name+"-other-"+string(rune('a'+i))] = o
		}
	}
	for name, config := range configs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in, err := podgen.Injector(config)
			if err != nil {
				t.Fatal(err)
			}
			p, err := admission.Compile(in, "")
			if err != nil {
				t.Fatal(err)
			}
			checkPolicyText(t, p)
		})
	}
}

type policyObject struct {
	Kind string `json:"kind"`
	Spec struct {
		MatchConditions []struct{ Name, Expression string } `json:"matchConditions"`
		Variables       []struct{ Name, Expression string } `json:"variables"`
		Mutations       []struct {
			JSONPatch struct{ Expression string } `json:"jsonPatch"`
		} `json:"mutations"`
		Validations []struct{ Expression, MessageExpression string } `json:"validations"`
	} `json:"spec"`
}

func checkPolicyText(t *testing.T, p *admission.Policy) {
	t.Helper()
	objs, err := p.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		var obj policyObject
		if err := json.Unmarshal(o, &obj); err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, c := range obj.Spec.MatchConditions {
			all = append(all, c.Expression)
		}
		for _, m := range obj.Spec.Mutations {
			all = append(all, m.JSONPatch.Expression)
		}
		for _, v := range obj.Spec.Validations {
			all = append(all, v.Expression, v.MessageExpression)
		}
		for _, v := range obj.Spec.Variables {
			all = append(all, v.Expression)
			if positional.MatchString(v.Name) {
				t.Errorf("%s: variable %s is named for its place, not for what it holds", obj.Kind, v.Name)
			}
			if !strings.HasPrefix(v.Expression, "// ") {
				t.Errorf("%s: variable %s has no comment saying what it holds", obj.Kind, v.Name)
			}
		}
		text := strings.Join(all, "\n")
		if m := deadFragments.FindString(text); m != "" {
			t.Errorf("%s: dead fragment %q in\n%s", obj.Kind, m, text)
		}
		for _, v := range obj.Spec.Variables {
			if !strings.Contains(text, "variables."+v.Name+"\n") && !regexp.MustCompile(`variables\.`+v.Name+`\b`).MatchString(text) {
				t.Errorf("%s: variable %s is never used", obj.Kind, v.Name)
			}
		}
	}
}

// TestPolicyExampleText holds the golden policy of the embedded default
// (examples/admission/policy.yaml, which -update rewrites) to what
// -update cannot: no dead fragments, and its size within the bounds it
// was cut to.
func TestPolicyExampleText(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../examples/admission/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The mutating policy names the embedded default it was compiled from
	// in one line (sidecar.kinject.dev/config) rather than spelling it out
	// again: the limits below hold for the whole file an operator reads.
	text := string(data)
	var mutating struct {
		Metadata struct{ Annotations map[string]string }
	}
	if err := yaml.Unmarshal([]byte(strings.SplitN(text, "\n---\n", 2)[0]), &mutating); err != nil {
		t.Fatal(err)
	}
	if doc := mutating.Metadata.Annotations[admission.ConfigAnnotation]; strings.Contains(doc, "\n") || strings.Contains(doc, "template") ||
		!strings.HasPrefix(doc, "{apiVersion: kinject.dev/v1alpha1, kind: SidecarInjection,") {
		t.Errorf("the policy does not carry its configuration as the one-line document naming the default: %q", doc)
	}
	if m := deadFragments.FindString(text); m != "" {
		t.Errorf("dead fragment %q in the example policy", m)
	}
	lines := strings.Split(text, "\n")
	long := 0
	for _, l := range lines {
		// The expressions are folded to 120 characters; the lines past
		// 200 hold one long literal each (a regular expression, a
		// message, the Envoy bootstrap) and nothing else.
		rest := withoutLongestLiteral(l)
		switch {
		case len(l) > 200 && len(strings.TrimSpace(rest)) > 8:
			t.Errorf("a line over 200 characters that is more than one literal: %s", l)
		case len(rest) > 140:
			t.Errorf("a line over 140 characters without its longest literal: %s", l)
		}
		if len(l) > 200 {
			long++
		}
	}
	for _, b := range []struct {
		what       string
		got, limit int
	}{
		// The default sidecar carries its Envoy bootstrap (2 KB of
		// literal), probes and a restricted securityContext, and the
		// policy reads other profiles' records with the record's own
		// pattern (2.2 KB). The validating policy reads the mutating
		// policy's decision from the Pod (the skip mark) and repeats none
		// of its variables. An operator reads it in one sitting: under
		// 500 lines and 30,000 bytes (docs/admission-policy.md has the
		// figures).
		{"lines", len(lines), 499},
		{"bytes", len(data), 29999},
		{"lines over 200 characters (one literal each)", long, 4},
	} {
		if b.got > b.limit {
			t.Errorf("the example policy has %d %s, more than %d", b.got, b.what, b.limit)
		}
	}
	// The example is the embedded default's policy: the same checks as the
	// compiled ones.
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.Compile(in, "")
	if err != nil {
		t.Fatal(err)
	}
	checkPolicyText(t, p)
	// And it is the file, byte for byte (the plugin's TestPolicyExample
	// rewrites the file with -update): a change of the compiler that
	// changes the policy's text and not its meaning fails here, in the
	// compiler's own package. The 4 objects are separated, never
	// preceded, by "---".
	compiled, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compiled, data) {
		var diff strings.Builder
		_, _ = textdiff.Write(&diff, "examples/admission/policy.yaml", "compiled", text, string(compiled), textdiff.Options{})
		t.Errorf("the default's policy is not examples/admission/policy.yaml (go test ./plugin/cmd -run TestPolicyExample -update rewrites it):\n%s", diff.String())
	}
	if bytes.HasPrefix(compiled, []byte("---")) || bytes.Count(compiled, []byte("\n---\n")) != 3 {
		t.Errorf("the 4 objects are not separated by 3 lines of ---")
	}
}

// celStringLiteral is a CEL string literal in double quotes.
var celStringLiteral = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// withoutLongestLiteral is line without its longest string literal.
func withoutLongestLiteral(line string) string {
	longest := ""
	for _, m := range celStringLiteral.FindAllString(line, -1) {
		if len(m) > len(longest) {
			longest = m
		}
	}
	return strings.Replace(line, longest, `""`, 1)
}
