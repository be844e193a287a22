package helm

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite the examples' expected output")

// The pinned tools, as hack/install-tools.sh installs them.
const (
	helm3Version     = "v3.22.0"
	helm4Version     = "v4.3.1"
	kustomizeVersion = "v5.8.0"
)

// statusAnnotation marks an injected pod template.
const statusAnnotation = "sidecar.kinject.dev/status"

var (
	repoRoot = testbin.ModuleRoot()
	example  = filepath.Join(repoRoot, "examples", "helm")
	chart    = filepath.Join(example, "charts", "web")
)

// tool finds a pinned tool in the tool cache (or on PATH) and checks its
// version: a missing or other one skips the test, or fails it in CI.
func tool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped in -short mode")
	}
	path := testbin.NeedTool(t, name)
	var args []string
	var want string
	switch name {
	case "helm3":
		args, want = []string{"version", "--short"}, helm3Version
	case "helm4":
		args, want = []string{"version", "--short"}, helm4Version
	case "kustomize":
		args, want = []string{"version"}, kustomizeVersion
	default:
		return path
	}
	out, _ := exec.Command(path, args...).Output()
	if v := strings.TrimSpace(string(out)); v != want && !strings.HasPrefix(v, want+"+") {
		testbin.Missing(t, "%s is %s %q, want %s: run hack/install-tools.sh", path, name, v, want)
	}
	return path
}

var (
	fnOnce sync.Once
	fnDir  string
	fnErr  error
)

// injectFn builds inject-fn once and returns the directory holding it.
func injectFn(t *testing.T) string {
	t.Helper()
	fnOnce.Do(func() {
		fnDir, fnErr = os.MkdirTemp("", "kinject-helm-fn-")
		if fnErr == nil {
			_, fnErr = testbin.BuildFunction(fnDir)
		}
	})
	if fnErr != nil {
		t.Fatal(fnErr)
	}
	return fnDir
}

// helmEnv is a Helm of its own: throw-away data, config and cache homes
// (where `helm plugin install` puts plugins), no cluster, and PATH.
func helmEnv(t *testing.T, path ...string) []string {
	t.Helper()
	home := t.TempDir()
	return append(os.Environ(),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HOME="+home, "KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
		"PATH="+strings.Join(append(path, "/usr/bin", "/bin"), string(os.PathListSeparator)))
}

// result is a finished command.
type result struct {
	stdout, stderr string
	code           int
}

// run runs name with args in dir with env (nil: the test's own), and
// stdin when not empty.
func run(t *testing.T, env []string, stdin, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = example, env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if exit, ok := err.(*exec.ExitError); ok {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s %s: exit %d in %s", filepath.Base(name), strings.Join(args, " "), r.code, time.Since(start).Round(time.Millisecond))
	return r
}

// mustRun is run for a command that must succeed; it returns stdout.
func mustRun(t *testing.T, env []string, stdin, name string, args ...string) string {
	t.Helper()
	r := run(t, env, stdin, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// object is one parsed document: its identity and its content as data
// (comments, order and quoting gone).
type object struct {
	id   string // kind/namespace/name
	data any
}

// parse reads a multi-document stream into its objects, in order.
func parse(t *testing.T, stream string) []object {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(stream))
	if err != nil {
		t.Fatalf("parsing the output: %v\n%s", err, stream)
	}
	var objs []object
	for _, n := range nodes {
		s, err := n.String()
		if err != nil {
			t.Fatal(err)
		}
		var data any
		if err := yaml.Unmarshal([]byte(s), &data); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, object{id: n.GetKind() + "/" + n.GetNamespace() + "/" + n.GetName(), data: data})
	}
	return objs
}

// byID indexes objects by identity; a repeated one fails the test.
func byID(t *testing.T, objs []object) map[string]any {
	t.Helper()
	m := map[string]any{}
	for _, o := range objs {
		if _, dup := m[o.id]; dup {
			t.Fatalf("%s appears twice", o.id)
		}
		m[o.id] = o.data
	}
	return m
}

// sameObjects fails the test unless got and want hold the same objects.
func sameObjects(t *testing.T, what string, got, want []object) {
	t.Helper()
	g, w := byID(t, got), byID(t, want)
	for _, id := range ids(w) {
		if _, ok := g[id]; !ok {
			t.Errorf("%s: %s is missing", what, id)
		} else if !reflect.DeepEqual(g[id], w[id]) {
			t.Errorf("%s: %s differs:\n--- got\n%s\n--- want\n%s", what, id, dump(g[id]), dump(w[id]))
		}
	}
	for _, id := range ids(g) {
		if _, ok := w[id]; !ok {
			t.Errorf("%s: %s is extra", what, id)
		}
	}
}

func ids(m map[string]any) []string {
	var s []string
	for id := range m {
		s = append(s, id)
	}
	sort.Strings(s)
	return s
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// injected returns the ids of the objects whose pod template carries the
// status annotation, sorted.
func injected(objs []object) []string {
	var s []string
	for _, o := range objs {
		if strings.Contains(dump(o.data), `"`+statusAnnotation+`"`) {
			s = append(s, o.id)
		}
	}
	sort.Strings(s)
	return s
}

// release is what `helm install -o json` prints of a release.
type release struct {
	Manifest string `json:"manifest"`
	Hooks    []struct {
		Manifest string `json:"manifest"`
	} `json:"hooks"`
}

// releaseObjects parses `helm install --dry-run=client -o json`: the
// manifest's objects and the hooks'.
func releaseObjects(t *testing.T, out string) []object {
	t.Helper()
	var r release
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("helm install -o json: %v\n%s", err, out)
	}
	stream := r.Manifest
	for _, h := range r.Hooks {
		stream += "\n---\n" + h.Manifest
	}
	return parse(t, stream)
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	testbin.Golden(t, *update, path, got, "./test/helm")
}

// Every workload of the chart, and the ones Helm makes hooks of.
var (
	workloads = []string{
		"Deployment/shop/web",
		"Job/shop/web-migrate",
		"Pod/shop/web-test-connection",
		"StatefulSet/shop/web-cache",
	}
	hooks = []string{"Job/shop/web-migrate", "Pod/shop/web-test-connection"}
)

// without returns s without the elements of drop.
func without(s, drop []string) []string {
	var keep []string
	for _, x := range s {
		if !contains(drop, x) {
			keep = append(keep, x)
		}
	}
	return keep
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if x == y {
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := testbin.Run(m) // removes testbin.PluginDir's binaries too
	if fnDir != "" {
		os.RemoveAll(fnDir)
	}
	os.Exit(code)
}
