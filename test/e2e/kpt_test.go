package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kptCase is the part of kpt's catalog .expected/config.yaml this harness
// reads.
type kptCase struct {
	TestType        string            `yaml:"testType"`
	Image           string            `yaml:"image"`
	ImagePullPolicy string            `yaml:"imagePullPolicy"`
	Args            map[string]string `yaml:"args"`
	ExitCode        int               `yaml:"exitCode"`
	AllowExec       bool              `yaml:"allowExec"`
}

func readKptCase(t *testing.T, pkg string) kptCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pkg, ".expected", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c kptCase
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s/.expected/config.yaml: %v", rel(pkg), err)
	}
	return c
}

// kptVariant is one way to run a package: with the image or with the
// binary.
type kptVariant struct {
	name string
	args func(c kptCase) []string
	// prepare edits the package copy before it is committed.
	prepare func(t *testing.T, dir string)
}

// evalVariants run `kpt fn eval` with the image (never pulled) and with
// --exec; both must give the same diff.
var evalVariants = []kptVariant{
	{name: "image", args: func(c kptCase) []string {
		return append([]string{"fn", "eval", ".", "--image", c.Image, "--image-pull-policy", "never"}, kvArgs(c.Args)...)
	}},
	{name: "exec", args: func(c kptCase) []string {
		return append([]string{"fn", "eval", ".", "--exec", "inject-fn"}, kvArgs(c.Args)...)
	}},
}

// renderVariants run `kpt fn render` with the Kptfile's image, and with
// the Kptfile switched to exec: inject-fn.
var renderVariants = []kptVariant{
	{name: "image", args: func(kptCase) []string {
		return []string{"fn", "render", ".", "--image-pull-policy", "never"}
	}},
	{name: "exec", args: func(kptCase) []string {
		return []string{"fn", "render", ".", "--allow-exec"}
	}, prepare: func(t *testing.T, dir string) {
		kptfile := filepath.Join(dir, "Kptfile")
		b, err := os.ReadFile(kptfile)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "- image: "+Image, "- exec: inject-fn", 1)
		if s == string(b) {
			t.Fatalf("Kptfile has no mutator with image %s", Image)
		}
		writeFile(t, kptfile, s)
	}},
}

func kvArgs(args map[string]string) []string {
	if len(args) == 0 {
		return nil
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []string{"--"}
	for _, k := range keys {
		out = append(out, k+"="+args[k])
	}
	return out
}

// runKptPackage runs a kpt catalog style package: copy it, commit it, run
// kpt, compare `git diff` with .expected/diff.patch, then run again and
// require that nothing changes.
func runKptPackage(t *testing.T, name string, variants []kptVariant) {
	kpt := need(t, "kpt")
	pkg := example(name)
	c := readKptCase(t, pkg)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if v.name == "image" {
				image(t)
			}
			dir := copyDir(t, pkg)
			if v.prepare != nil {
				v.prepare(t, dir)
			}
			gitInit(t, dir)
			args := v.args(c)
			r := run(t, dir, kpt, args...)
			if r.code != c.ExitCode {
				t.Fatalf("kpt %s: exit %d, want %d\n%s", strings.Join(args, " "), r.code, c.ExitCode, r.stderr)
			}
			golden(t, filepath.Join(pkg, ".expected", "diff.patch"), gitDiff(t, dir))

			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-q", "-m", "first run")
			if r := run(t, dir, kpt, args...); r.code != c.ExitCode {
				t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
			}
			if diff := gitDiff(t, dir); diff != "" {
				t.Errorf("the second run changed the package:\n%s", diff)
			}
		})
	}
}

func TestKptEval(t *testing.T) { runKptPackage(t, "kpt-eval", evalVariants) }

func TestKptRender(t *testing.T) { runKptPackage(t, "kpt-render", renderVariants) }

// TestKptRenderClassicRefused renders examples/kpt-render without its
// native: true: the template's log shipper is then a classic sidecar,
// which would keep the Job's Pod running after the app exits, so the
// function refuses the Job (runs_to_completion), kpt fails, and the package
// is left as it was. It is what the README says native: true is for.
func TestKptRenderClassicRefused(t *testing.T) {
	kpt := need(t, "kpt")
	dir := copyDir(t, example("kpt-render"))
	for _, v := range renderVariants {
		if v.name == "exec" {
			v.prepare(t, dir) // exec: inject-fn in the Kptfile
		}
	}
	config := filepath.Join(dir, "inject.yaml")
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "\n  native: true\n", "\n", 1)
	if s == string(b) {
		t.Fatal("inject.yaml does not set native: true")
	}
	writeFile(t, config, s)
	gitInit(t, dir)
	r := run(t, dir, kpt, "fn", "render", ".", "--allow-exec")
	const want = `spec.template.spec.restartPolicy: \"Never\": the pod runs to completion, and classic sidecar \"log-shipper\" would keep it running after the app exits`
	if r.code == 0 || !strings.Contains(r.stderr, "runs_to_completion") || !strings.Contains(r.stderr, want) {
		t.Errorf("kpt fn render with a classic sidecar for a Job: exit %d, want a failure naming runs_to_completion and %s\n%s", r.code, want, r.stderr)
	}
	if diff := gitDiff(t, dir); diff != "" {
		t.Errorf("the refused render changed the package:\n%s", diff)
	}
}

func TestSeed(t *testing.T) { runKptPackage(t, "seed", evalVariants) }
