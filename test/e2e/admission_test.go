package e2e

import (
	"os"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/staticdir"
	"github.com/kinject/kubectl-inject/pkg/inject"

	"path/filepath"
	"strings"
	"testing"
)

// TestAdmissionKustomize builds examples/admission/kustomize: the
// Deployment comes out as written and the four policy objects are added.
func TestAdmissionKustomize(t *testing.T) {
	dir := filepath.Join(example("admission"), "kustomize")
	kustomizeBuild(t, dir, "inject.yaml", filepath.Join(dir, "expected.yaml"), "--enable-alpha-plugins", "--enable-exec")
	b, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if !strings.Contains(string(b), "kind: "+kind+"\n") {
			t.Errorf("expected.yaml has no %s", kind)
		}
	}
	if strings.Contains(string(b), "envoyproxy/envoy:v1.40.0\n        name: envoy") {
		t.Error("the Deployment was injected; with admissionPolicy it must stay as written")
	}
}

// TestAdmissionKpt runs kpt fn eval with admissionPolicy=true on
// examples/admission, with --exec and with the image: app.yaml must not
// change, the policy lands in kinject-envoy.yaml, and a second run changes
// nothing.
func TestAdmissionKpt(t *testing.T) {
	kpt := need(t, "kpt")
	pkg := example("admission")
	c := readKptCase(t, pkg)
	for _, v := range evalVariants {
		t.Run(v.name, func(t *testing.T) {
			if v.name == "image" {
				image(t)
			}
			dir := copyDir(t, pkg)
			gitInit(t, dir)
			args := v.args(c)
			if r := run(t, dir, kpt, args...); r.code != 0 {
				t.Fatalf("kpt %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
			}
			if diff := gitDiff(t, dir); diff != "" {
				t.Errorf("the workloads changed:\n%s", diff)
			}
			b, err := os.ReadFile(filepath.Join(dir, "kinject-envoy.yaml"))
			if err != nil {
				t.Fatalf("the policy file was not written: %v", err)
			}
			golden(t, filepath.Join(pkg, ".expected", "kinject-envoy.yaml"), string(b))

			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-q", "-m", "first run")
			if r := run(t, dir, kpt, args...); r.code != 0 {
				t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
			}
			if diff := gitDiff(t, dir); diff != "" {
				t.Errorf("the second run changed the package:\n%s", diff)
			}
		})
	}
}

// TestStaticAdmissionKpt: staticAdmissionPolicy=true renders the policy's
// static form, each object to the file the API server reads it from
// (mutating/, validating/), byte for byte what kubectl inject policy
// --static writes after validating it; the workloads stay as written.
func TestStaticAdmissionKpt(t *testing.T) {
	kpt := need(t, "kpt")
	dir := copyDir(t, example("admission"))
	gitInit(t, dir)
	if r := run(t, dir, kpt, "fn", "eval", ".", "--exec", "inject-fn", "--", "staticAdmissionPolicy=true"); r.code != 0 {
		t.Fatalf("kpt fn eval: exit %d\n%s", r.code, r.stderr)
	}
	if diff := gitDiff(t, dir); diff != "" {
		t.Errorf("the workloads changed:\n%s", diff)
	}
	in, err := inject.NewDefault(inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.CompileStatic(in, "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.StaticFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := staticdir.Validate(want); err != nil {
		t.Fatal(err)
	}
	mutating, _ := filepath.Glob(filepath.Join(dir, "mutating", "*"))
	validating, _ := filepath.Glob(filepath.Join(dir, "validating", "*"))
	if got := len(mutating) + len(validating); got != len(want) || len(want) != 4 {
		t.Errorf("the function wrote %d files under mutating/ and validating/, want %d (4)", got, len(want))
	}
	for _, f := range want {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || string(got) != string(f.Data) {
			t.Errorf("%s: the function's file differs from policy --static's (%v):\n%s", f.Path, err, got)
		}
	}
}
