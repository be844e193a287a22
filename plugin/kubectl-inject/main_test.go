package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
)

// frontDoorCase is one command line, and whether kubectl-inject serves it
// alone (true) or hands it to kinject-live (false).
type frontDoorCase struct {
	name   string
	args   []string
	stdin  string
	served bool
}

func frontDoorCases(t *testing.T) []frontDoorCase {
	t.Helper()
	root := testbin.ModuleRoot()
	app := filepath.Join(root, "examples", "cli", "app.yaml")
	tmp := t.TempDir()
	privileged := filepath.Join(tmp, "privileged.yaml")
	writeFile(t, privileged, "containers:\n- name: proxy\n  image: envoyproxy/envoy:v1.36.2\n  securityContext:\n    privileged: true\n")
	metrics := filepath.Join(tmp, "metrics.yaml")
	writeFile(t, metrics, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: metrics\nspec:\n  profile: metrics\n  template:\n    containers: [{name: exporter, image: prom/exporter:1}]\n")
	// Expressions beyond the core's subset: kubectl-inject hands a template
	// with them to kinject-live, which runs cel-go in its process.
	computed := filepath.Join(tmp, "computed.yaml")
	writeFile(t, computed, "containers:\n- name: proxy\n  image: example/proxy:1.0\n  args: [--port, \"80\", --name, x]\n"+
		"parameters:\n- annotation: port\n  field: containers[proxy].args[--port]\n  type: int\n  expression: 'has(object.spec.containers[0].ports) ? object.spec.containers[0].ports[0].containerPort + 1 : 9'\n"+
		"- annotation: name\n  field: containers[proxy].args[--name]\n  type: string\n  expression: \"(has(object.metadata.labels) && 'app' in object.metadata.labels ? object.metadata.labels.app.upperAscii() : 'none') + '-' + string(2.0 * 1.5)\"\n")
	failing := filepath.Join(tmp, "failing.yaml")
	writeFile(t, failing, "containers:\n- name: proxy\n  image: example/proxy:1.0\n  args: [--name, x]\n"+
		"parameters:\n- annotation: name\n  field: containers[proxy].args[--name]\n  type: string\n  expression: 'object.metadata.labels.nope.lowerAscii()'\n")
	broken := filepath.Join(tmp, "broken.yaml")
	writeFile(t, broken, "containers: [{name: p, image: p:1, args: [--n, x]}]\nparameters:\n- {annotation: n, field: 'containers[p].args[--n]', type: string, expression: 'object.nope('}\n")
	// -f URL: kubectl-inject links no HTTP client and hands it on.
	files := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(root, "examples", "cli"))))
	t.Cleanup(files.Close)
	remoteRef := filepath.Join(tmp, "ref.yaml")
	writeFile(t, remoteRef, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: mesh\nspec:\n  templateRef:\n    name: envoy-initializer\n")
	cases := []frontDoorCase{
		{name: "local", args: []string{"--local", "-f", app}, served: true},
		{name: "stdin", args: []string{"--local", "-f", "-"}, stdin: slurp(t, app), served: true},
		{name: "check", args: []string{"--local", "-f", app, "--check"}, served: true},
		{name: "uninject", args: []string{"--local", "-f", app, "--uninject"}, served: true},
		{name: "selector and native", args: []string{"--local", "-f", app, "-l", "app=web", "--native"}, served: true},
		{name: "flags in any order", args: []string{"-f=" + app, "--image", "envoyproxy/envoy:v1.36.3", "--local=true", "--dry-run=client"}, served: true},
		{name: "directory", args: []string{"--local", "-R", "-f", filepath.Join(root, "examples", "kpt-render")}, served: true},
		{name: "warning", args: []string{"--local", "-f", app, "--template", privileged}, served: true},
		{name: "strict", args: []string{"--local", "-f", app, "--template", privileged, "--strict"}, served: true},
		{name: "missing file", args: []string{"--local", "-f", filepath.Join(tmp, "none.yaml")}, served: true},
		{name: "cluster template", args: []string{"--local", "-f", app, "--template", remoteRef}, served: true},
		{name: "verbosity", args: []string{"--local", "-f", app, "-v=6"}, served: true},
		{name: "verbosity, long form", args: []string{"--v", "4", "--local", "-f", app}, served: true},
		{name: "bad YAML", args: []string{"--local", "-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {a: [}\n", served: true},
		{name: "profile", args: []string{"--local", "-f", app, "--profile", "logs"}, served: true},
		{name: "expressions beyond the subset", args: []string{"--local", "-f", app, "--template", computed}},
		{name: "an expression that fails", args: []string{"--local", "-f", app, "--template", failing}},
		// The default over a Pod its evaluator is unsure of (a protocol
		// written as a number): kinject-cel evaluates it.
		{name: "the default left to cel-go", args: []string{"--local", "-f", "-"}, stdin: unsurePod, served: true},
		{name: "an expression that does not compile", args: []string{"--local", "-f", app, "--template", broken}},
		{name: "all profiles", args: []string{"--local", "-f", app, "--uninject", "--all-profiles"}, served: true},
		{name: "profile of a SidecarInjection", args: []string{"--local", "-f", app, "--template", metrics, "--profile", "metrics"}, served: true},
		{name: "profile differs from the template's", args: []string{"--local", "-f", app, "--template", metrics, "--profile", "logs"}, served: true},
		{name: "diff", args: []string{"--local", "-f", app, "--diff", "--color=always"}, served: true},
		{name: "diff of a missing file", args: []string{"--local", "-f", filepath.Join(tmp, "none.yaml"), "--diff"}, served: true},
		{name: "diff of bad YAML", args: []string{"--local", "-f", "-", "--diff"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {a: [}\n", served: true},
		// Left to the full command: its flags, its help, and the mistakes it explains.
		{name: "URL", args: []string{"--local", "-f", files.URL + "/app.yaml"}},
		{name: "URL beside a file", args: []string{"--local", "-f", app, "-f", files.URL + "/app.yaml", "--check"}},
		{name: "URL not found", args: []string{"--local", "-f", files.URL + "/none.yaml"}},
		{name: "diff with a flag mistake", args: []string{"--local", "-f", app, "--diff", "--in-place"}},
		{name: "help", args: []string{"--help"}},
		{name: "version", args: []string{"--version"}},
		{name: "completion", args: []string{"__complete", ""}},
		{name: "no files", args: []string{"--local"}},
		{name: "arguments", args: []string{"--local", "-f", app, "deploy/web"}},
		{name: "server dry run", args: []string{"--local", "-f", app, "--dry-run=server"}},
		{name: "output name", args: []string{"--local", "-f", app, "-o", "name"}},
		{name: "kubectl flag", args: []string{"--local", "-f", app, "-n", "default"}},
		{name: "live-only flag", args: []string{"--local", "-f", app, "--server-side"}},
		{name: "unknown flag", args: []string{"--local", "-f", app, "--frobnicate"}},
		{name: "live", args: []string{"deploy/web", "--in-place"}},
		{name: "bad profile", args: []string{"--local", "-f", app, "--profile", "Logs"}},
		{name: "all profiles without uninject", args: []string{"--local", "-f", app, "--all-profiles"}},
		{name: "no cluster", args: []string{"deploy/web"}},
		{name: "version is not -v", args: []string{"-v"}},
	}
	goldens, err := filepath.Glob(filepath.Join(root, "pkg", "inject", "testdata", "golden", "*"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden corpus: %v", err)
	}
	for _, dir := range goldens {
		args := []string{"--local", "-f", filepath.Join(dir, "input.yaml")}
		if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
			args = append(args, "--template", filepath.Join(dir, "config.yaml"))
		}
		cases = append(cases, frontDoorCase{name: "golden/" + filepath.Base(dir), args: args, served: true})
	}
	return cases
}

// TestFrontDoor runs each command line through kubectl-inject and through
// kinject-live directly: stdout, stderr and exit code must be the
// same. A copy of kubectl-inject with no kinject-live beside it
// tells which ones it served itself: those give the same results again,
// the others fail saying what is missing.
func TestFrontDoor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no cluster is ever asked
	dir := testbin.PluginDir(t)
	alone := filepath.Join(t.TempDir(), testbin.Plugin)
	copyFile(t, filepath.Join(dir, testbin.Plugin), alone)
	// The copy alone finds kinject-cel only where KINJECT_CEL says.
	helperEnv := podexpr.HelperEnv + "=" + filepath.Join(dir, testbin.Helper)
	for _, tc := range frontDoorCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			want := runBinary(t, filepath.Join(dir, testbin.PluginLive), tc)
			if got := runBinary(t, filepath.Join(dir, testbin.Plugin), tc); got != want {
				t.Errorf("kubectl-inject and kinject-live differ:\n--- kubectl-inject:\n%s\n--- kinject-live:\n%s", got, want)
			}
			got := runBinary(t, alone, tc, helperEnv)
			missing := strings.Contains(got, "needs kinject-live beside it")
			switch {
			case tc.served && got != want:
				t.Errorf("not served without kinject-live:\n%s\n--- want:\n%s", got, want)
			case !tc.served && !missing:
				t.Errorf("served by the front door, want it handed on:\n%s", got)
			}
		})
	}
}

// TestFrontDoorURL: a URL given to -f is read (by kinject-live, which
// kubectl-inject hands it to) as the file it serves would be.
func TestFrontDoorURL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	dir := filepath.Join(testbin.ModuleRoot(), "examples", "cli")
	files := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer files.Close()
	plugin := filepath.Join(testbin.PluginDir(t), testbin.Plugin)
	fromFile := runBinary(t, plugin, frontDoorCase{args: []string{"--local", "-f", "-"}, stdin: slurp(t, filepath.Join(dir, "app.yaml"))})
	fromURL := runBinary(t, plugin, frontDoorCase{args: []string{"--local", "-f", files.URL + "/app.yaml"}})
	stdout := func(out string) string { return out[:strings.Index(out, "\nstderr:\n")] }
	if !strings.HasPrefix(fromURL, "exit 0\n") || stdout(fromURL) != stdout(fromFile) || !strings.Contains(fromURL, "injected") {
		t.Errorf("-f URL:\n%s\n--- want the output of the same file:\n%s", fromURL, fromFile)
	}
}

// TestFrontDoorThroughSymlink is krew's layout: only kubectl-inject is
// linked into a directory on PATH; kinject-live is found beside the
// link's target.
func TestFrontDoorThroughSymlink(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	dir := testbin.PluginDir(t)
	link := filepath.Join(t.TempDir(), testbin.Plugin)
	if err := os.Symlink(filepath.Join(dir, testbin.Plugin), link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	out := runBinary(t, link, frontDoorCase{args: []string{"--version"}})
	if !strings.HasPrefix(out, "exit 0\nstdout:\nkubectl-inject ") {
		t.Errorf("--version through a link:\n%s", out)
	}
}

// TestFrontDoorLinksNoClient keeps the front door light: no Kubernetes
// client or API types, whose initialization is what it exists to avoid.
func TestFrontDoorLinksNoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range testbin.GoListDeps(t, ".") {
		for _, heavy := range []string{"k8s.io/client-go/", "k8s.io/cli-runtime/", "k8s.io/api/", "k8s.io/apimachinery/", "github.com/google/cel-go/", "cel.dev/expr"} {
			if strings.HasPrefix(pkg, heavy) {
				t.Errorf("kubectl-inject links %s", pkg)
			}
		}
	}
	// Nor an HTTP client: kyaml's dependencies import net/http, but only
	// for code the linker leaves out; a call from this project's own
	// packages (-f URL) would add net/http and crypto/tls, 2 MB of the
	// binary, all of it mapped at every start. kinject-live reads URLs.
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		if !strings.HasPrefix(pkg, "github.com/kinject/kubectl-inject/") {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if imp == "net/http" || imp == "crypto/tls" {
				t.Errorf("%s, linked into kubectl-inject, imports %s", pkg, imp)
			}
		}
	}
}

// runBinary returns the exit code, stdout and stderr of bin with tc's
// arguments, env added to the environment.
func runBinary(t *testing.T, bin string, tc frontDoorCase, env ...string) string {
	t.Helper()
	cmd := exec.Command(bin, tc.args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(tc.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return "exit " + strconv.Itoa(code) + "\nstdout:\n" + stdout.String() + "\nstderr:\n" + stderr.String()
}

// The helpers the tests of every binary share.
var (
	writeFile = testbin.WriteFile
	slurp     = testbin.ReadFile
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// unsurePod writes a port's protocol as a number: the default's
// expression is left to cel-go (in kinject-cel, for kubectl-inject).
const unsurePod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: app:1\n    ports: [{containerPort: 80, protocol: 6}]\n"

// TestFrontDoorWithoutHelper: where cel-go must evaluate, kubectl-inject
// fails without kinject-cel with an error that says what to install; the
// embedded default, whose expressions the core evaluates, needs none.
func TestFrontDoorWithoutHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	dir := testbin.PluginDir(t)
	alone := filepath.Join(t.TempDir(), testbin.Plugin)
	copyFile(t, filepath.Join(dir, testbin.Plugin), alone)
	app := filepath.Join(testbin.ModuleRoot(), "examples", "cli", "app.yaml")
	noHelper := []string{podexpr.HelperEnv + "=", "PATH=" + t.TempDir()}
	if got := runBinary(t, alone, frontDoorCase{args: []string{"--local", "-f", app}}, noHelper...); !strings.HasPrefix(got, "exit 0\n") || !strings.Contains(got, "sidecar.kinject.dev/status") {
		t.Errorf("the default without kinject-cel:\n%s", got)
	}
	// The default over a Pod its evaluator leaves to cel-go.
	got := runBinary(t, alone, frontDoorCase{args: []string{"--local", "-f", "-"}, stdin: unsurePod}, noHelper...)
	if !strings.HasPrefix(got, "exit 1\n") || !strings.Contains(got, "kinject-cel is not at "+filepath.Join(filepath.Dir(alone), testbin.Helper)) || !strings.Contains(got, podexpr.HelperEnv) {
		t.Errorf("a computed template without kinject-cel:\n%s", got)
	}
}

// TestLocalOnEveryCore: on a stream long enough for the documents to be
// parsed on every core (more than manifest.SmallStream), kubectl-inject
// --local gives what it gives on one core (GOMAXPROCS=1, where it reads
// the stream on one goroutine): output, report and exit code, byte for
// byte, for each way of writing the result, a failing document included.
func TestLocalOnEveryCore(t *testing.T) {
	bin := localPlugin(t)
	// About 90 KB: past SmallStream, and quick for each of the six runs;
	// a document the core refuses in the middle.
	var stream bytes.Buffer
	stream.WriteString(generatedApps(t, 30))
	stream.WriteString("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: broken}\nspec:\n  template:\n    spec:\n      containers: {name: app}\n")
	stream.WriteString(generatedApps(t, 30))
	if stream.Len() <= manifest.SmallStream+manifest.SmallStream/4 {
		t.Fatalf("the stream is %d bytes, not long enough", stream.Len())
	}
	input := filepath.Join(t.TempDir(), "apps.yaml")
	writeFile(t, input, stream.String())
	for _, tc := range []frontDoorCase{
		{name: "file", args: []string{"--local", "-f", input}},
		{name: "stdin", args: []string{"--local", "-f", "-"}, stdin: stream.String()},
		{name: "check", args: []string{"--local", "-f", input, "--check"}},
		{name: "diff", args: []string{"--local", "-f", input, "--diff"}},
		{name: "uninject", args: []string{"--local", "-f", input, "--uninject"}},
		{name: "in place", args: []string{"--local", "-f", input, "--in-place", "--continue-on-error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each run starts from the input and ends with the file as
			// it left it (--in-place rewrites it).
			run := func(cores string) string {
				writeFile(t, input, stream.String())
				return runBinary(t, bin, tc, "GOMAXPROCS="+cores) + "\nfile:\n" + slurp(t, input)
			}
			one := run("1")
			if got := run("2"); got != one {
				t.Errorf("on two cores:\n%.2000s\n--- on one:\n%.2000s", got, one)
			}
			if !strings.Contains(one, "broken") {
				t.Errorf("the broken document is not reported:\n%.2000s", one)
			}
		})
	}
}

// TestDiffOfALongStream: --diff on a stream whose every Deployment gains
// the sidecar's lines compares it document by document (the whole file at
// once took about a minute and gigabytes at 200 apps), and patch(1), when
// installed, turns the input into --local's output with it.
func TestDiffOfALongStream(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch(1) not installed")
	}
	bin := localPlugin(t)
	input := filepath.Join(t.TempDir(), "apps.yaml")
	writeFile(t, input, generatedApps(t, 1000))
	run := func(args ...string) []byte {
		cmd := exec.Command(bin, append([]string{"--local", "-f", input}, args...)...)
		out, err := cmd.Output()
		if exit, ok := err.(*exec.ExitError); err != nil && !(ok && exit.ExitCode() == 1 && len(args) > 0) {
			t.Fatalf("kubectl-inject %v: %v", args, err) // --diff exits 1: the file would change
		}
		return out
	}
	want := run()
	diff := run("--diff")
	// Injecting only adds lines: a diff that removes one compared
	// misaligned parts.
	for _, line := range strings.Split(string(diff), "\n") {
		if strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "--- ") {
			t.Fatalf("the diff removes a line: %q", line)
		}
	}
	cmd := exec.Command(patch, "-s", input)
	cmd.Stdin = bytes.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s", err, out)
	}
	if got := slurp(t, input); got != string(want) {
		t.Errorf("the patched input differs from --local's output (%d and %d bytes)", len(got), len(want))
	}
}

// localPlugin is kubectl-inject built for the tests, with no cluster to
// ask; it skips the test in -short mode.
func localPlugin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	return filepath.Join(testbin.PluginDir(t), testbin.Plugin)
}

// generatedApps is the benchmark generator's stream of n apps.
func generatedApps(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	if err := gen.Write(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
