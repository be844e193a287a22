package inject

import (
	"errors"
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// subsetPod reads a Pod (or a workload) and its profile's record.
func subsetPod(t testing.TB, doc string) (*exprPod, bool) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil || len(n.Content) == 0 {
		return nil, false
	}
	path := PodTemplatePath{}
	if scalarField(n.Content[0], "kind") != "Pod" {
		path.Path = []string{"spec", "template"}
	}
	target, err := findPodTarget(n.Content[0], path)
	if err != nil {
		return nil, false
	}
	records, err := readRecords(target)
	if err != nil {
		return nil, false
	}
	return &exprPod{t: target, rec: findRecord(records, "")}, true
}

// bothWays evaluates text over pod with the subset's evaluator and with
// cel-go. subset is errUnsure when the evaluator left it to cel-go.
func bothWays(t testing.TB, text string, pod *exprPod, pt ParameterType) (subset, cel string, subsetErr, celErr error) {
	t.Helper()
	n, ok := parseSubset(text)
	if !ok {
		t.Fatalf("%q: not in the subset", text)
	}
	subsetErr = errUnsure
	if view, err := pod.view(); err == nil {
		if v, err := evalSubset(n, view); err == nil {
			subset, subsetErr = expressionValue(v, pt)
		}
	}
	cel, celErr = (&expression{text: text, subset: nil}).evalCEL(pod, pt)
	return subset, cel, subsetErr, celErr
}

// evalCEL evaluates with cel-go only.
func (e *expression) evalCEL(pod *exprPod, pt ParameterType) (string, error) {
	prg, err := e.program()
	if err != nil {
		return "", err
	}
	out, _, err := prg.Eval(map[string]any{"object": pod.object()})
	if err != nil {
		return "", err
	}
	return expressionValue(celValue(out), pt)
}

const subsetDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    metadata:
      labels: {app: web, tier: front}
      annotations: {note: x}
    spec:
      containers:
      - name: web
        image: nginx
        ports:
        - {containerPort: 53, protocol: UDP}
        - {name: http, containerPort: 8080}
        - {containerPort: 9090, protocol: TCP}
      - name: side
        image: side
`

// TestSubsetAgreesWithCEL: over the same Pod, the subset's evaluator gives
// what cel-go gives, and gives it itself where it should (fast).
func TestSubsetAgreesWithCEL(t *testing.T) {
	t.Parallel()
	defaultPort := DefaultTemplate().Parameters[0].Expression
	injected := `apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: p, sidecar.kinject.dev/injected: "true"}
  annotations:
    sidecar.kinject.dev/status: '{"v":1,"template":"x","containers":["envoy"],"volumes":["envoy-conf"],"labels":["sidecar.kinject.dev/injected"]}'
    keep: "1"
spec:
  containers:
  - name: envoy
    image: envoy
    ports: [{containerPort: 10000}]
  - name: app
    image: app
    ports: [{containerPort: 3000}]
  volumes:
  - name: envoy-conf
  - name: data
`
	for _, c := range []struct {
		name, expr, pod string
		pt              ParameterType
		fast            bool // the subset's evaluator computes it
	}{
		{"default: first TCP port", defaultPort, subsetDeployment, TypePort, true},
		{"default: no ports", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, image: a}]\n", TypePort, true},
		{"default: UDP only", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 53, protocol: UDP}]}]\n", TypePort, true},
		{"default: no containers", defaultPort, "apiVersion: v1\nkind: Pod\nspec: {}\n", TypePort, true},
		{"default: port out of range", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 70000}]}]\n", TypePort, true},
		{"default: port a string", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: \"80\"}]}]\n", TypePort, true},
		{"default: protocol an int", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 80, protocol: 6}]}]\n", TypePort, false},
		{"default: containerPort missing", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{name: x}]}]\n", TypePort, false},
		{"default: ports null", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: null}]\n", TypePort, true},
		{"default: containers a map", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: {a: b}\n", TypePort, false},
		{"default: the profile's own container left out", defaultPort, injected, TypePort, true},
		{"default: a merge key", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - &c {name: a, ports: [{containerPort: 81}]}\n  - <<: *c\n", TypePort, true},
		{"default: an alias", defaultPort, "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: &p [{containerPort: 81}]\nspec:\n  containers:\n  - {name: b, ports: *p}\n", TypePort, false},
		{"default: a float port", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 80.0}]}]\n", TypePort, true},
		{"own annotations and labels left out", "has(object.metadata.annotations.keep) && !('sidecar.kinject.dev/status' in object.metadata.annotations) && size(object.metadata.labels) == 1 ? 'yes' : 'no'", injected, TypeString, true},
		{"own volumes left out", "object.spec.volumes.map(v, v.name)[0]", injected, TypeString, true},
		{"size of volumes", "size(object.spec.volumes) == 1 ? 1 : 2", injected, TypeInt, true},
		{"label", "object.metadata.labels.tier", subsetDeployment, TypeString, true},
		{"label by index", "object.metadata.labels['tier']", subsetDeployment, TypeString, true},
		{"absent label", "object.metadata.labels.nope", subsetDeployment, TypeString, false},
		{"in a map", "'app' in object.metadata.labels ? 1 : 0", subsetDeployment, TypeInt, true},
		{"in a list", "'web' in object.spec.containers.map(c, c.name) ? 1 : 0", subsetDeployment, TypeInt, true},
		{"all", "object.spec.containers.all(c, has(c.image)) ? 1 : 0", subsetDeployment, TypeInt, true},
		{"exists_one", "object.spec.containers.exists_one(c, c.name.startsWith('s')) ? 1 : 0", subsetDeployment, TypeInt, true},
		{"filter then size", "size(object.spec.containers[0].ports.filter(p, p.containerPort > 1000))", subsetDeployment, TypeInt, true},
		{"a string compared to an int", "object.spec.containers[0].name == 1 ? 1 : 0", subsetDeployment, TypeInt, false},
		{"error absorbed by ||", "object.metadata.labels.nope == 'x' || true ? 1 : 0", subsetDeployment, TypeInt, false},
		{"a bool is not an int", "true", subsetDeployment, TypeInt, true},
		{"an int is not a string", "1", subsetDeployment, TypeString, true},
		{"a list is not an int", "[1, 2]", subsetDeployment, TypeInt, true},
		{"negative int", "-5", subsetDeployment, TypeInt, true},
		{"string escapes", `'a\'b' == "a'b" ? 'y' : 'n'`, subsetDeployment, TypeString, true},
		{"size of a string in code points", "size('héllo')", subsetDeployment, TypeInt, true},
		{"index out of range", "object.spec.containers[5].name", subsetDeployment, TypeString, false},
		{"apiVersion and kind", "object.apiVersion + '/' == '' ? '' : object.kind", subsetDeployment, TypeString, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, ok := parseSubset(c.expr); !ok {
				if c.fast {
					t.Fatalf("not in the subset")
				}
				return
			}
			pod, ok := subsetPod(t, c.pod)
			if !ok {
				t.Fatal("the pod does not read")
			}
			got, want, gotErr, wantErr := bothWays(t, c.expr, pod, c.pt)
			if errors.Is(gotErr, errUnsure) {
				if c.fast {
					t.Fatalf("left to cel-go (cel-go: %q, %v)", want, wantErr)
				}
				return
			}
			if !c.fast {
				t.Errorf("computed by the subset (%q, %v): the case expects cel-go", got, gotErr)
			}
			if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("subset %q, %v; cel-go %q, %v", got, gotErr, want, wantErr)
			}
		})
	}
}

// TestParseSubset: what the subset reads, and what it leaves to cel-go.
func TestParseSubset(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text string
		ok         bool
	}{
		{"the default's app port", DefaultTemplate().Parameters[0].Expression, true},
		{"comment", "object.kind // the kind\n", true},
		{"arithmetic", "object.spec.containers[0].ports[0].containerPort + 1", false},
		{"ext strings", "'A'.lowerAscii()", false},
		{"float", "1.5", false},
		{"hex", "0x10", false},
		{"uint", "1u", false},
		{"bytes", "b'a'", false},
		{"raw string", "r'a'", false},
		{"triple quotes", "'''a'''", false},
		{"unknown escape", `'\u00e9'`, false},
		{"optional field", "object.?spec", false},
		{"undeclared variable", "request.kind", false},
		{"has of a non-field", "has(object)", false},
		{"macro over object", "object.spec.containers.exists(object, true)", false},
		{"unbalanced", "(object", false},
		{"trailing", "object object", false},
		{"leading zero", "01", false},
		{"map literal", "{'a': 1}", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, ok := parseSubset(c.text); ok != c.ok {
				t.Errorf("parseSubset(%q) ok = %v, want %v", c.text, ok, c.ok)
			}
		})
	}
}

// TestDefaultExpressionsInSubset: every expression of the embedded default
// is in the subset and precompiled, so the default path runs no cel-go.
func TestDefaultExpressionsInSubset(t *testing.T) {
	for _, p := range DefaultTemplate().Parameters {
		if p.Expression == "" {
			continue
		}
		if _, ok := parseSubset(p.Expression); !ok {
			t.Errorf("%s: the expression is not in the subset", p.Annotation)
		}
		if _, ok := precompiled()[p.Expression]; !ok {
			t.Errorf("%s: the expression is not precompiled", p.Annotation)
		}
	}
}

// FuzzSubsetAgreesWithCEL: over any Pod, the default's expression gives
// with the subset's evaluator what it gives with cel-go.
func FuzzSubsetAgreesWithCEL(f *testing.F) {
	f.Add(subsetDeployment)
	f.Add("apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 80, protocol: TCP}, {containerPort: 81}]}]\n")
	f.Add("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - <<: {ports: [{containerPort: 1}]}\n    ports: null\n")
	text := DefaultTemplate().Parameters[0].Expression
	f.Fuzz(func(t *testing.T, doc string) {
		pod, ok := subsetPod(t, doc)
		if !ok {
			return
		}
		got, want, gotErr, wantErr := bothWays(t, text, pod, TypePort)
		if errors.Is(gotErr, errUnsure) {
			return
		}
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("subset %q, %v; cel-go %q, %v", got, gotErr, want, wantErr)
		}
	})
}

// TestScalarValueInts: the decimal shortcut reads an int as the decoder
// does, and leaves the other forms to it.
func TestScalarValueInts(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"0", "-0", "8080", "-12", "017", "0x1F", "0o17", "1_000", "+5", "999999999999999999", "9999999999999999999"} {
		t.Run(text, func(t *testing.T) {
			t.Parallel()
			n := &yaml.Node{Kind: yaml.ScalarNode, Value: text}
			var want any
			if err := n.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if i, ok := want.(int); ok {
				want = int64(i)
			}
			if got := scalarValue(n); got != want {
				t.Errorf("scalarValue = %#v, the decoder gives %#v", got, want)
			}
		})
	}
}

// FuzzSubsetExpressions: any expression in the subset that cel-go
// compiles gives, over any Pod, what cel-go gives, wherever the subset's
// evaluator does not leave it to cel-go.
func FuzzSubsetExpressions(f *testing.F) {
	seeds := []string{
		DefaultTemplate().Parameters[0].Expression,
		"object.metadata.labels.tier",
		"size(object.spec.containers) > 1 ? 'many' : 'one'",
		"object.spec.containers.map(c, c.name).exists(n, n.startsWith('w')) ? 1 : null",
		"'app' in object.metadata.labels && object.metadata.labels.app != 'x'",
		"object.spec.containers.filter(c, has(c.ports)).all(c, c.ports.exists_one(p, p.containerPort >= 80))",
		"[1, 2, 3].exists(x, x == 2) ? object.kind : object.apiVersion",
	}
	for _, s := range seeds {
		f.Add(s, subsetDeployment)
	}
	f.Fuzz(func(t *testing.T, text, doc string) {
		n, ok := parseSubset(text)
		if !ok {
			return
		}
		e := &expression{text: text}
		if _, err := e.program(); err != nil {
			return // not a valid template: cel-go says so before any evaluation
		}
		pod, ok := subsetPod(t, doc)
		if !ok {
			return
		}
		view, err := pod.view()
		if err != nil {
			return
		}
		v, err := evalSubset(n, view)
		if err != nil {
			return
		}
		for _, pt := range []ParameterType{TypeString, TypeInt} {
			got, gotErr := expressionValue(v, pt)
			want, wantErr := e.evalCEL(pod, pt)
			if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%q as %s: subset %q, %v; cel-go %q, %v", text, pt, got, gotErr, want, wantErr)
			}
		}
	})
}

// TestExpressionsShared: templates carrying the same expression text share
// one expression, prepared once.
func TestExpressionsShared(t *testing.T) {
	a, b := DefaultTemplate(), DefaultTemplate()
	if a.Parameters[0].expr == nil || a.Parameters[0].expr != b.Parameters[0].expr {
		t.Error("two parses of the default hold two expressions")
	}
}
