package inject_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// expressionTemplate sets the proxy's --port from an expression.
func expressionTemplate(t *testing.T, typ, expr string) *inject.Injector {
	t.Helper()
	tmpl := "containers:\n- name: proxy\n  image: example/proxy:1.0\n  args: [--port, \"80\", --name, x]\n" +
		"parameters:\n- annotation: port\n  field: containers[proxy].args[--port]\n  type: " + typ + "\n  expression: " + quote(expr) + "\n"
	tp, err := inject.ParseTemplate([]byte(tmpl))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tp, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

const exprPod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {tier: web}\nspec:\n  containers:\n  - name: app\n    image: a\n    ports: [{containerPort: 8080}]\n"

// TestExpressionValues: the value of an expression lands in the field, the
// annotation wins over it, and null keeps the template's value.
func TestExpressionValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, typ, expr, pod, want string }{
		{"int", "int", "object.spec.containers[0].ports[0].containerPort + 1", exprPod, `"8081"`},
		{"string from a label", "string", "object.metadata.labels.tier", exprPod, `"web"`},
		{"null keeps the template's", "int", "null", exprPod, `"80"`},
		{"annotation wins", "int", "1", strings.Replace(exprPod, "name: p\n", "name: p\n  annotations: {sidecar.kinject.dev/port: \"7\"}\n", 1), `"7"`},
		{"ext strings", "string", "'A-B'.lowerAscii().split('-').join('.')", exprPod, `"a.b"`},
		// As the API server decodes it: a field written null is absent.
		{"a null field is absent", "int", "has(object.spec.hostNetwork) ? 1 : 2", strings.Replace(exprPod, "spec:\n", "spec:\n  hostNetwork: null\n", 1), `"2"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, entries := expressionTemplate(t, c.typ, c.expr).ProcessText(inject.OpInject, []byte(c.pod), 0)
			if len(entries) != 1 || entries[0].Action != inject.Injected {
				t.Fatalf("entries %v", entries)
			}
			if !strings.Contains(string(out), "args: [--port, "+c.want+", --name, x]") {
				t.Errorf("want %s after --port:\n%s", c.want, out)
			}
		})
	}
}

// TestExpressionErrors: an expression that fails, gives the wrong type or
// costs too much fails the object with an error naming the parameter and
// its field, not quoting the expression (the template holds it, and the
// reason must fit in the 1,024 characters a skip mark keeps).
func TestExpressionErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, typ, expr, want string }{
		{"no such key", "int", "object.spec.nothing", "no such key: nothing"},
		{"wrong type", "int", "'80'", "does not give an int (or null)"},
		{"wrong string", "image", "'Not An Image'", `"Not An Image" is not an image reference`},
		{"syntax", "int", "object.spec.(", "Syntax error"},
		{"undeclared", "int", "request.namespace", "undeclared reference"},
		{"too costly", "int", "[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, [1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, [1,2,3,4,5,6,7,8,9,10].map(e, [1,2,3,4,5,6,7,8,9,10].map(f, a)))))).size()", "cost limit exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, entries := expressionTemplate(t, c.typ, c.expr).ProcessText(inject.OpInject, []byte(exprPod), 0)
			if len(entries) != 1 || entries[0].Action != inject.Failed {
				t.Fatalf("entries %v, want a failure", entries)
			}
			msg := entries[0].Message
			if !strings.Contains(msg, "parameters: port: containers[proxy].args[--port]: expression: ") || !strings.Contains(msg, c.want) ||
				strings.Contains(msg, strconv.Quote(c.expr)) {
				t.Errorf("message %q: want the parameter, its field and %q, and not the expression quoted", msg, c.want)
			}
			if string(out) != exprPod {
				t.Error("a failed object must pass through unchanged")
			}
		})
	}
}

// TestExpressionSeesThePodBeforeInjection: re-injecting computes from the
// pod template without the profile's own sidecar, so an injected object is
// current, and a changed port updates it.
func TestExpressionSeesThePodBeforeInjection(t *testing.T) {
	t.Parallel()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: a\n    ports: [{containerPort: 3000}]\n"
	once, _ := in.ProcessText(inject.OpInject, []byte(pod), 0)
	twice, entries := in.ProcessText(inject.OpInject, once, 0)
	if entries[0].Action != inject.Unchanged || string(twice) != string(once) {
		t.Fatalf("second injection: %v", entries)
	}
	moved := strings.Replace(string(once), "containerPort: 3000", "containerPort: 4000", 1)
	out, entries := in.ProcessText(inject.OpInject, []byte(moved), 0)
	if entries[0].Action != inject.Updated || !strings.Contains(string(out), "value: \"4000\"") || !strings.Contains(string(out), `"values":{"app-port":"4000"}`) {
		t.Errorf("after the port moved: %v\n%s", entries, out)
	}
}
