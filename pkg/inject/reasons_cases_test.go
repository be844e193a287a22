package inject_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// The profiles of the annotation conflict: each template adds the same
// annotation. Written out here, as podgen's Reasons* are.
const (
	reasonsAnnotation = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: proxy}
spec:
  template:
    metadata:
      annotations: {example.com/mesh: proxy}
    containers:
    - {name: proxy, image: example.com/proxy:v1}
`
	reasonsOtherAnnotation = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: other}
spec:
  profile: other
  template:
    metadata:
      annotations: {example.com/mesh: other}
    containers:
    - {name: other, image: example.com/other:v1}
`
)

// documentReasonCases are the reasons the core gives for a document or an
// item rather than for a pod (and uninject's), and the annotation
// conflict, beside reasonCases.
var documentReasonCases = []reasonCase{{
	name: "uninject of a Pod never injected", config: podgen.ReasonsProxy, op: inject.OpUninject,
	object: pod("namespace: ns-a", appContainer),
	action: inject.Skipped, reason: inject.ReasonNotInjected,
}, {
	name: "a null item of a List", config: podgen.ReasonsProxy,
	object: "apiVersion: v1\nkind: List\nitems:\n- null\n",
	action: inject.Skipped, reason: inject.ReasonNotAnObject,
	message: "item is null, not an object; left as it is",
}, {
	name: "a mapping that is not a Kubernetes object", config: podgen.ReasonsProxy,
	object: "replicas: 3\nimage: busybox\n",
	action: inject.Failed, reason: inject.ReasonNotKubernetes,
	message: "neither apiVersion nor kind: not a Kubernetes object",
}, {
	name: "a tab where YAML wants spaces", config: podgen.ReasonsProxy,
	object: "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: p\n",
	action: inject.Failed, reason: inject.ReasonInvalidYAML,
	message: "not valid YAML: yaml: line 4: found character that cannot start any token",
}, {
	name: "a document over the limit", config: podgen.ReasonsProxy,
	// One byte over: the annotation alone fills the limit.
	object: pod("namespace: ns-a, annotations: {filler: "+strings.Repeat("x", inject.MaxDocumentBytes)+"}", appContainer),
	action: inject.Failed, reason: inject.ReasonTooLarge,
	message: "document is 8.0 MiB, larger than the 8 MiB limit for one object",
}, {
	name: "an annotation another profile added", config: reasonsAnnotation, others: []string{reasonsOtherAnnotation},
	object: pod("namespace: ns-a", appContainer),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictAnnotation.Name,
	message: `annotation "example.com/mesh" (metadata.annotations) is added by profile "other" and by the default profile: two profiles cannot add the same annotation (change one of the templates)`,
}}

// allReasonCases are the cases TestReasons runs.
func allReasonCases() []reasonCase {
	return slices.Concat(reasonCases, documentReasonCases)
}

// TestEveryReasonHasACase: every Reason constant the package declares has
// an absolute case, an object whose report a test holds to the
// written-out code, with an outcome the table of reasons allows: a case of
// TestReasons for a code the core gives, of TestLiveReasons (the live
// patcher) or a cluster test (the plugin's system_namespace) for one the
// live commands give. Every kind of conflict has a case of TestReasons. A
// golden file does not count: -update rewrites it. A reason or a kind
// added without a case fails here, by name.
func TestEveryReasonHasACase(t *testing.T) {
	t.Parallel()
	outcomes := map[inject.Reason][]inject.Action{}
	byCore := map[inject.Reason]bool{}
	kinds := map[string]bool{}
	for _, c := range allReasonCases() {
		if c.reason != "" {
			outcomes[c.reason] = append(outcomes[c.reason], c.action)
			byCore[c.reason] = true
		}
		if c.conflict != "" {
			kinds[c.conflict] = true
		}
	}
	for _, c := range liveReasonCases {
		outcomes[c.reason] = append(outcomes[c.reason], inject.Failed)
	}
	for _, c := range clusterReasonCases {
		if !clusterCaseFound(t, c) {
			t.Errorf("reason %s: %s in %s does not assert %q", c.reason, c.test, c.file, c.text())
			continue
		}
		outcomes[c.reason] = append(outcomes[c.reason], c.action)
	}
	declared := declaredReasons(t)
	for _, code := range declared {
		actions, ok := outcomes[inject.Reason(code)]
		if !ok {
			t.Errorf("reason %s: declared, but no case gives it", code)
			continue
		}
		rule, _ := inject.ReasonRuleOf(inject.Reason(code))
		if rule.LiveOnly() == byCore[rule.Reason] {
			t.Errorf("reason %s: the table says the live commands give it: %v; a case of the core gives it: %v", code, rule.LiveOnly(), byCore[rule.Reason])
		}
		for _, a := range actions {
			if !slices.Contains(rule.Outcomes, a) {
				t.Errorf("reason %s: a case has it %s, the table of reasons says %v", code, a, rule.Outcomes)
			}
		}
	}
	for code := range outcomes {
		if !slices.Contains(declared, string(code)) {
			t.Errorf("reason %s: a case gives it, but the package declares no such reason", code)
		}
	}
	declaredKinds := declaredConflictKinds(t)
	for _, k := range declaredKinds {
		if !kinds[k] {
			t.Errorf("conflict kind %s: declared, but no case gives it", k)
		}
	}
	for k := range kinds {
		if !slices.Contains(declaredKinds, k) {
			t.Errorf("conflict kind %s: a case names it, but the package declares no such kind", k)
		}
	}
}

// declaredConflictKinds are the Names of the package's ConflictKind
// variables, read from its source. Every kind the package's functions
// hand out must be among them, so that a kind declared in another form
// is not missed.
func declaredConflictKinds(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if typ, ok := lit.Type.(*ast.Ident); !ok || typ.Name != "ConflictKind" {
				return true
			}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if key, ok := kv.Key.(*ast.Ident); !ok || key.Name != "Name" {
					continue
				}
				v, ok := kv.Value.(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: a ConflictKind whose Name is not a string literal", fset.Position(kv.Pos()))
				}
				name, err := strconv.Unquote(v.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, name)
			}
			return true
		})
	}
	handed := append(inject.MetadataConflictKinds(), inject.ItemConflictKind("containers"), inject.ItemConflictKind("volumes"), inject.ConflictPort)
	for _, k := range handed {
		if !slices.Contains(out, k.Name) {
			t.Fatalf("conflict kind %s: the package hands it out, but no ConflictKind literal of its source names it (read %v)", k.Name, out)
		}
	}
	return out
}
