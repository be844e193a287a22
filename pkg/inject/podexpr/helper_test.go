package podexpr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
)

// pipeCompiler is the helper's client talking to ServeHelper, with cel-go
// in this process, through pipes: the protocol of kinject-cel without its
// binary (test/e2e runs the binary).
func pipeCompiler(t testing.TB) Compiler {
	c, _ := countedPipeCompiler(t)
	return c
}

// countedPipeCompiler is pipeCompiler, and the number of requests the
// helper has read so far.
func countedPipeCompiler(t testing.TB) (Compiler, *atomic.Int64) {
	t.Helper()
	reqR, reqW := io.Pipe()
	requests := &atomic.Int64{}
	respR, respW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := ServeHelper(lineCounter{reqR, requests}, respW, celgo.Compile)
		respW.Close()
		done <- err
	}()
	h := &helper{proc: "a pipe"}
	h.start = func() error {
		h.out = bufio.NewWriter(reqW)
		h.enc = json.NewEncoder(h.out)
		h.dec = json.NewDecoder(respR)
		return nil
	}
	t.Cleanup(func() {
		reqW.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeHelper: %v", err)
		}
	})
	return h.compile, requests
}

// lineCounter counts the lines read through it: the helper's requests.
type lineCounter struct {
	r io.Reader
	n *atomic.Int64
}

func (c lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(bytes.Count(p[:n], []byte("\n"))))
	return n, err
}

// outcome is a result or an error, as a parameter would see it: a value
// of a type no parameter takes by its CEL type's name (celgo.Other in the
// process, otherValue through the helper).
func outcome(v any, err error) string {
	switch v.(type) {
	case nil, int64, string:
	default:
		return fmt.Sprintf("another type: %v", v)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%T %v", v, v)
}

// TestHelperAgreesWithCEL: through the helper, every expression gives what
// cel-go gives in the process, errors word for word, and the Pod's
// numbers keep their types (an int, a double, a uint, an infinity).
func TestHelperAgreesWithCEL(t *testing.T) {
	helperCompile := pipeCompiler(t)
	pods := map[string]string{
		"deployment": subsetDeployment,
		"injected":   injectedPod,
		"numbers":    "apiVersion: v1\nkind: Pod\nmetadata:\n  annotations: {a: '1.0'}\nspec:\n  priority: 9999999999999999999\n  x: .inf\n  y: -.inf\n  containers:\n  - {name: a, ports: [{containerPort: 80.0}, {containerPort: 81}, {containerPort: 0x52}]}\n",
		"aliases":    "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: &l {app: a, 'é\\u2028<>&': yes}\nspec:\n  containers:\n  - &c {name: a, env: [{name: L, value: '1'}]}\n  - <<: *c\n    name: b\n  nodeSelector: *l\n",
	}
	exprs := []string{
		defaultPort(t),
		"'A'.lowerAscii()",
		"object.spec.containers[0].ports[0].containerPort + 1",
		"string(type(object.spec.containers[0].ports[0].containerPort))",
		"string(type(object.spec.containers[0].ports[1].containerPort))",
		"object.spec.containers[0].ports[2].containerPort",
		"string(type(object.spec.priority))",
		"object.spec.x > 1.0 && object.spec.y < 0.0 ? 'inf' : 'no'",
		"object.metadata.labels.nope",
		"object.spec.containers.map(c, c.name).join(',')",
		"object.spec.nodeSelector.app + string(size(object.metadata.labels))",
		"object.metadata.labels.exists(k, k.startsWith('é')) ? 'yes' : 'no'",
		"1.5",
		"[1, 2]",
		"object.nope(",
		"request.kind",
		"has(object.metadata.annotations.keep) ? object.metadata.annotations.keep : 'gone'",
		"'sidecar.kinject.dev/status' in object.metadata.annotations ? 'seen' : 'hidden'",
		"object.spec.containers.filter(c, c.name == 'envoy').size()",
	}
	for podName, doc := range pods {
		pod, ok := subsetPod(t, doc)
		if !ok {
			t.Fatalf("%s: the pod does not read", podName)
		}
		for _, text := range exprs {
			checked := precompiled()[text]
			inPrg, inErr := celgo.Compile(text, checked)
			hPrg, hErr := helperCompile(text, checked)
			if outcome(nil, inErr) != outcome(nil, hErr) {
				t.Errorf("%s: compile: in the process %v; through the helper %v", text, inErr, hErr)
				continue
			}
			if inErr != nil {
				continue
			}
			want := outcome(inPrg(pod.object()))
			got := outcome(hPrg(pod.object()))
			if got != want {
				t.Errorf("%s over %s: through the helper %s; in the process %s", text, podName, got, want)
			}
		}
	}
}

// TestHelperValueRoundTrip: what the helper reads is what was sent, type
// for type: 1.0 stays a double and 1 an int.
func TestHelperValueRoundTrip(t *testing.T) {
	shared := []any{"x", int64(1)}
	for _, v := range []any{
		map[string]any{},
		map[string]any{"i": int64(1), "f": 1.0, "g": -0.5, "e": 1e300, "tiny": 5e-324, "neg": int64(math.MinInt64)},
		map[string]any{"u": uint64(math.MaxUint64), "inf": math.Inf(1), "-inf": math.Inf(-1), "n": nil, "t": true, "F": false},
		map[string]any{"s": "é\u2028<>&\"\\\n", "": "", "l": []any{}, "m": map[string]any{"a": shared, "b": shared}},
	} {
		data, err := helperValue(v)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		got, err := readHelperValue(data)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("sent %#v, read %#v (%s)", v, got, data)
		}
	}
}

// TestHelperValueRefused: what cannot be sent is refused with a reason,
// not expanded without end.
func TestHelperValueRefused(t *testing.T) {
	cycle := map[string]any{}
	cycle["self"] = cycle
	var bomb any = "lol"
	for range 30 { // 2^30 leaves, written as 30 levels of aliases
		bomb = []any{bomb, bomb}
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"x": math.NaN()}, ".nan"},
		{cycle, "nests deeper than"},
		{map[string]any{"bomb": bomb}, "aliases are expanded"},
	} {
		_, err := helperValue(c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), HelperName) {
			t.Errorf("error %v, want one naming %s and saying %q", err, HelperName, c.want)
		}
	}
}

// TestHelperMissing: without kinject-cel, an expression that needs cel-go
// fails with an error that says what to install and where; a helper that
// does not answer fails with what it said.
func TestHelperMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(HelperEnv, "")
	_, err := HelperCompiler()("'A'.lowerAscii()", "")
	if err == nil || !strings.Contains(err.Error(), HelperName) || !strings.Contains(err.Error(), HelperEnv) {
		t.Errorf("no helper: %v, want an error naming %s and %s", err, HelperName, HelperEnv)
	}

	t.Setenv(HelperEnv, filepath.Join(t.TempDir(), "nowhere"))
	if _, err := HelperCompiler()("'A'.lowerAscii()", ""); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("a helper path that does not exist: %v", err)
	}

	script := filepath.Join(t.TempDir(), "mute")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'cannot serve' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(HelperEnv, script)
	c := HelperCompiler()
	_, err = c("'A'.lowerAscii()", "")
	if err == nil || !strings.Contains(err.Error(), "stopped answering") {
		t.Errorf("a helper that exits: %v", err)
	}
	if _, again := c("'B'.lowerAscii()", ""); again == nil || again.Error() != err.Error() {
		t.Errorf("the next request: %v, want the same error again", again)
	}
}

// BenchmarkHelperEval is one evaluation of an expression beyond the subset
// over a Deployment's pod template: in the process, and through the
// helper's protocol (pipes, without the process).
func BenchmarkHelperEval(b *testing.B) {
	pod, ok := subsetPod(b, subsetDeployment)
	if !ok {
		b.Fatal("the pod does not read")
	}
	text := "object.metadata.labels.app.upperAscii() + string(size(object.spec.containers))"
	for _, c := range []struct {
		name    string
		compile Compiler
	}{{"in-process", celgo.Compile}, {"helper", pipeCompiler(b)}} {
		b.Run(c.name, func(b *testing.B) {
			prg, err := c.compile(text, "")
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				pod.plain = nil // a new document each time
				if _, err := prg(pod.object()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHelperEvaluatesTogether: the expressions only cel-go evaluates are
// evaluated over a Pod in one request, the first one asked for bringing
// the others' results; a new Pod asks again; the results are cel-go's.
func TestHelperEvaluatesTogether(t *testing.T) {
	compile, requests := countedPipeCompiler(t)
	texts := []string{"object.metadata.labels.app.upperAscii()", "object.spec.containers[0].ports[0].containerPort * 2", "object.metadata.labels.nope.lowerAscii()"}
	subset := "object.metadata.labels.app"
	programs := map[string]Program{}
	for _, text := range append(texts, subset) {
		prg, err := compile(text, "")
		if err != nil {
			t.Fatal(err)
		}
		programs[text] = prg
	}
	compiled := requests.Load()
	if compiled != 4 {
		t.Fatalf("%d requests to compile 4 expressions", compiled)
	}
	for i, doc := range []string{subsetDeployment, strings.Replace(subsetDeployment, "app: web", "app: shop", 1)} {
		pod, ok := subsetPod(t, doc)
		if !ok {
			t.Fatal("the pod does not read")
		}
		for _, text := range texts {
			in, err := celgo.Compile(text, "")
			if err != nil {
				t.Fatal(err)
			}
			want := outcome(in(pod.object()))
			if got := outcome(programs[text](pod.object())); got != want {
				t.Errorf("pod %d, %s: through the helper %s, in the process %s", i, text, got, want)
			}
		}
		if got, want := requests.Load(), compiled+int64(i)+1; got != want {
			t.Errorf("pod %d: %d requests in all, want %d (one per Pod for the %d expressions outside the subset)", i, got, want, len(texts))
		}
	}
	// An expression of the subset, left to cel-go by the subset's
	// evaluator, is asked for on its own, with the others.
	pod, _ := subsetPod(t, subsetDeployment)
	if v, err := programs[subset](pod.object()); err != nil || v != "web" {
		t.Errorf("%s: %v, %v", subset, v, err)
	}
}
