package podexpr

import (
	"errors"
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject/record"
)

// subsetPod reads a Pod (or a workload's pod template) and what its
// default profile's record says was injected.
func subsetPod(t testing.TB, doc string) (*Pod, bool) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil || len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	root := yaml.NewRNode(n.Content[0])
	tmpl := root
	if kind := root.GetKind(); kind != "Pod" {
		var err error
		if tmpl, err = root.Pipe(yaml.Lookup("spec", "template")); err != nil || tmpl == nil || tmpl.YNode().Kind != yaml.MappingNode {
			return nil, false
		}
	}
	pod := &Pod{}
	if meta := tmpl.Field("metadata"); meta != nil {
		pod.Meta = meta.Value.YNode()
	}
	spec := tmpl.Field("spec")
	if spec == nil {
		return nil, false
	}
	pod.Spec = spec.Value.YNode()
	if pod.Meta != nil && pod.Meta.Kind == yaml.MappingNode {
		if text, err := yaml.NewRNode(pod.Meta).Pipe(yaml.Lookup("annotations", recordKey)); err == nil && text != nil {
			own, err := record.Parse(recordKey, text.YNode().Value)
			if err != nil {
				return nil, false
			}
			pod.Own = &Own{
				Items: map[string][]string{"containers": own.Containers, "initContainers": own.InitContainers, "volumes": own.Volumes},
				Keys:  map[string][]string{"labels": own.Labels, "annotations": append([]string{recordKey}, own.Annotations...)},
			}
		}
	}
	return pod, true
}

// recordKey is the default profile's record.
const recordKey = "sidecar.kinject.dev/status"

// typed is how a result is compared: as a parameter takes it (an int or a
// string; null is "null"), or the error it is.
func typed(v any, integer bool) (string, error) {
	switch v := v.(type) {
	case nil:
		return "null", nil
	case int64:
		if integer {
			return fmt.Sprint(v), nil
		}
	case string:
		if !integer {
			return v, nil
		}
	}
	return "", errors.New("not of the type")
}

// bothWays evaluates text over pod with the subset's evaluator and with
// cel-go. subsetErr is errUnsure when the evaluator left it to cel-go.
func bothWays(t testing.TB, text string, pod *Pod, integer bool) (subset, cel string, subsetErr, celErr error) {
	t.Helper()
	n, ok := parseSubset(text)
	if !ok {
		t.Fatalf("%q: not in the subset", text)
	}
	subsetErr = errUnsure
	if view, err := pod.view(); err == nil {
		if v, err := evalSubset(n, view); err == nil {
			subset, subsetErr = typed(v, integer)
		}
	}
	v, celErr := (&Expression{text: text}).evalCEL(pod)
	if celErr == nil {
		cel, celErr = typed(v, integer)
	}
	return subset, cel, subsetErr, celErr
}

// injectedPod carries the default profile's injection: envoy, its volume
// and its label, which its expressions must not see.
const injectedPod = `apiVersion: v1
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

// TestOwnLeftOut: what the profile injected is not seen, by the subset's
// evaluator nor by cel-go: the values are the app's.
func TestOwnLeftOut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ expr, want string }{
		{"object.spec.volumes.map(v, v.name)[0]", "data"},
		{"object.spec.containers[0].name", "app"},
		{"size(object.metadata.labels) == 1 && !('sidecar.kinject.dev/status' in object.metadata.annotations) ? 'hidden' : 'seen'", "hidden"},
	} {
		pod, ok := subsetPod(t, injectedPod)
		if !ok || pod.Own == nil {
			t.Fatal("the injected pod does not read with its record")
		}
		fast, err := New(c.expr).Eval(pod)
		if err != nil || fast != c.want {
			t.Errorf("%s: %v, %v; want %q", c.expr, fast, err, c.want)
		}
		slow, err := (&Expression{text: c.expr}).evalCEL(pod)
		if err != nil || slow != c.want {
			t.Errorf("%s with cel-go: %v, %v; want %q", c.expr, slow, err, c.want)
		}
	}
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
	defaultPort := defaultPort(t)
	injected := injectedPod
	for _, c := range []struct {
		name, expr, pod string
		integer         bool
		fast            bool // the subset's evaluator computes it
	}{
		{"default: first TCP port", defaultPort, subsetDeployment, true, true},
		{"default: no ports", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, image: a}]\n", true, true},
		{"default: UDP only", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 53, protocol: UDP}]}]\n", true, true},
		{"default: no containers", defaultPort, "apiVersion: v1\nkind: Pod\nspec: {}\n", true, true},
		{"default: port out of range", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 70000}]}]\n", true, true},
		{"default: port a string", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: \"80\"}]}]\n", true, true},
		{"default: protocol an int", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 80, protocol: 6}]}]\n", true, false},
		{"default: containerPort missing", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{name: x}]}]\n", true, false},
		{"default: ports null", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: null}]\n", true, true},
		{"default: containers a map", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: {a: b}\n", true, false},
		{"default: the profile's own container left out", defaultPort, injected, true, true},
		{"default: a merge key", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - &c {name: a, ports: [{containerPort: 81}]}\n  - <<: *c\n", true, true},
		{"default: an alias", defaultPort, "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: &p [{containerPort: 81}]\nspec:\n  containers:\n  - {name: b, ports: *p}\n", true, false},
		{"default: a float port", defaultPort, "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 80.0}]}]\n", true, true},
		{"own annotations and labels left out", "has(object.metadata.annotations.keep) && !('sidecar.kinject.dev/status' in object.metadata.annotations) && size(object.metadata.labels) == 1 ? 'yes' : 'no'", injected, false, true},
		{"own volumes left out", "object.spec.volumes.map(v, v.name)[0]", injected, false, true},
		{"size of volumes", "size(object.spec.volumes) == 1 ? 1 : 2", injected, true, true},
		{"label", "object.metadata.labels.tier", subsetDeployment, false, true},
		{"label by index", "object.metadata.labels['tier']", subsetDeployment, false, true},
		{"absent label", "object.metadata.labels.nope", subsetDeployment, false, false},
		{"in a map", "'app' in object.metadata.labels ? 1 : 0", subsetDeployment, true, true},
		{"in a list", "'web' in object.spec.containers.map(c, c.name) ? 1 : 0", subsetDeployment, true, true},
		{"all", "object.spec.containers.all(c, has(c.image)) ? 1 : 0", subsetDeployment, true, true},
		{"exists_one", "object.spec.containers.exists_one(c, c.name.startsWith('s')) ? 1 : 0", subsetDeployment, true, true},
		{"filter then size", "size(object.spec.containers[0].ports.filter(p, p.containerPort > 1000))", subsetDeployment, true, true},
		{"a string compared to an int", "object.spec.containers[0].name == 1 ? 1 : 0", subsetDeployment, true, false},
		{"error absorbed by ||", "object.metadata.labels.nope == 'x' || true ? 1 : 0", subsetDeployment, true, false},
		{"a bool is not an int", "true", subsetDeployment, true, true},
		{"an int is not a string", "1", subsetDeployment, false, true},
		{"a list is not an int", "[1, 2]", subsetDeployment, true, true},
		{"negative int", "-5", subsetDeployment, true, true},
		{"string escapes", `'a\'b' == "a'b" ? 'y' : 'n'`, subsetDeployment, false, true},
		{"size of a string in code points", "size('héllo')", subsetDeployment, true, true},
		{"index out of range", "object.spec.containers[5].name", subsetDeployment, false, false},
		{"apiVersion and kind", "object.apiVersion + '/' == '' ? '' : object.kind", subsetDeployment, false, false},
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
			got, want, gotErr, wantErr := bothWays(t, c.expr, pod, c.integer)
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
		{"the default's app port", defaultPort(t), true},
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

// FuzzSubsetAgreesWithCEL: over any Pod, the default's expression gives
// with the subset's evaluator what it gives with cel-go.
func FuzzSubsetAgreesWithCEL(f *testing.F) {
	f.Add(subsetDeployment)
	f.Add("apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, ports: [{containerPort: 80, protocol: TCP}, {containerPort: 81}]}]\n")
	f.Add("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - <<: {ports: [{containerPort: 1}]}\n    ports: null\n")
	text := defaultPort(f)
	f.Fuzz(func(t *testing.T, doc string) {
		pod, ok := subsetPod(t, doc)
		if !ok {
			return
		}
		got, want, gotErr, wantErr := bothWays(t, text, pod, true)
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
		defaultPort(f),
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
		e := &Expression{text: text}
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
		for _, integer := range []bool{false, true} {
			got, gotErr := typed(v, integer)
			want, wantErr := "", error(nil)
			cv, err := e.evalCEL(pod)
			if err != nil {
				wantErr = err
			} else {
				want, wantErr = typed(cv, integer)
			}
			if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%q (int %v): subset %q, %v; cel-go %q, %v", text, integer, got, gotErr, want, wantErr)
			}
		}
	})
}
