package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The profiles example: two SidecarInjections, one profile each, in a kpt
// package (examples/profiles/kpt) and as two kustomize transformer configs
// (examples/profiles/kustomize).

// TestProfilesKptRender renders the package with the image and with the
// binary: both profiles are injected as .expected/diff.patch shows, and a
// second render changes nothing.
func TestProfilesKptRender(t *testing.T) { runKptPackage(t, "profiles/kpt", renderVariants) }

// TestProfilesKptEval runs kpt fn eval without arguments on the same
// package: kpt sends an empty function config, so the function applies the
// package's SidecarInjections and the diff is the render's.
func TestProfilesKptEval(t *testing.T) { runKptPackage(t, "profiles/kpt", evalVariants) }

// TestProfilesKptUninject takes the profiles out of a rendered package one
// at a time with kpt fn eval: without logs, app.yaml is what rendering the
// mesh profile alone writes; without every profile, it is the example's
// app.yaml byte for byte. The results kpt prints are the README's.
func TestProfilesKptUninject(t *testing.T) {
	kpt := need(t, "kpt")
	pkg := example("profiles/kpt")
	inject := func(t *testing.T, edit func(dir string)) string {
		t.Helper()
		dir := copyDir(t, pkg)
		if edit != nil {
			edit(dir)
		}
		r := run(t, dir, kpt, "fn", "eval", ".", "--exec", "inject-fn")
		if r.code != 0 {
			t.Fatalf("kpt fn eval: exit %d\n%s", r.code, r.stderr)
		}
		if edit == nil {
			for _, line := range readmeResults(t) {
				if !strings.Contains(r.stderr, line+"\n") {
					t.Errorf("kpt's output lacks the README's line %q:\n%s", line, r.stderr)
				}
			}
		}
		return dir
	}
	read := func(t *testing.T, path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	both := inject(t, nil)
	meshOnly := inject(t, func(dir string) {
		profiles := filepath.Join(dir, "profiles.yaml")
		text := read(t, profiles)
		i := strings.Index(text, "\n---\n")
		if i < 0 {
			t.Fatal("profiles.yaml holds one document, want mesh then logs")
		}
		writeFile(t, profiles, text[:i+1])
	})
	uninject := func(args ...string) {
		t.Helper()
		r := run(t, both, kpt, append([]string{"fn", "eval", ".", "--exec", "inject-fn", "--"}, args...)...)
		if r.code != 0 {
			t.Fatalf("kpt fn eval -- %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	uninject("uninject=true", "profile=logs")
	if got, want := read(t, filepath.Join(both, "app.yaml")), read(t, filepath.Join(meshOnly, "app.yaml")); got != want {
		t.Errorf("uninject of logs != rendering mesh alone:\n--- got\n%s\n--- want\n%s", got, want)
	}
	uninject("uninject=true", "allProfiles=true")
	if got, want := read(t, filepath.Join(both, "app.yaml")), read(t, filepath.Join(pkg, "app.yaml")); got != want {
		t.Errorf("uninject of every profile != the example's app.yaml:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestProfilesKustomize builds the kustomize directory in exec mode, and in
// container mode with its two transformer configs switched to the image:
// both give expected.yaml, and building the output again changes nothing.
func TestProfilesKustomize(t *testing.T) {
	dir := example("profiles/kustomize")
	expected := filepath.Join(dir, "expected.yaml")
	t.Run("exec", func(t *testing.T) {
		kustomizeBuild(t, dir, "inject.yaml", expected, "--enable-alpha-plugins", "--enable-exec")
	})
	t.Run("container", func(t *testing.T) {
		need(t, "kustomize")
		image(t)
		copied := copyDir(t, dir)
		transformer := filepath.Join(copied, "inject.yaml")
		b, err := os.ReadFile(transformer)
		if err != nil {
			t.Fatal(err)
		}
		const exec, container = "exec:\n        path: inject-fn\n", "container:\n        image: " + Image + "\n"
		if n := strings.Count(string(b), exec); n != 2 {
			t.Fatalf("inject.yaml has %d exec functions, want 2", n)
		}
		writeFile(t, transformer, strings.ReplaceAll(string(b), exec, container))
		kustomizeBuild(t, copied, "inject.yaml", expected, "--enable-alpha-plugins")
	})
}

// TestProfilesReadme holds examples/profiles/README.md to the package: the
// lines its diff block adds are lines diff.patch adds.
func TestProfilesReadme(t *testing.T) {
	patch, err := os.ReadFile(filepath.Join(example("profiles/kpt"), ".expected", "diff.patch"))
	if err != nil {
		t.Fatal(err)
	}
	added := map[string]bool{}
	for _, line := range strings.Split(string(patch), "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") {
			added[line] = true
		}
	}
	lines := strings.Split(exampleBlock(t, "diff"), "\n")
	n := 0
	for _, line := range lines {
		if !strings.HasPrefix(line, "+") || strings.Contains(line, "…") {
			continue
		}
		n++
		if !added[line] {
			t.Errorf("README.md's diff shows %q, which diff.patch does not add", line)
		}
	}
	if n == 0 {
		t.Error("README.md's diff block shows no added line")
	}
}

// readmeResults returns the result lines of the README's kpt output block,
// without their indentation.
func readmeResults(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(exampleBlock(t, "text"), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "[info]") {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatal("README.md's text block shows no [info] result")
	}
	return out
}

// exampleBlock returns the first ```LANG block of examples/profiles/README.md.
func exampleBlock(t *testing.T, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(example("profiles"), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "\n```"+lang+"\n")
	if start < 0 {
		t.Fatalf("examples/profiles/README.md has no %s block", lang)
	}
	s = s[start+len("\n```"+lang+"\n"):]
	end := strings.Index(s, "\n```")
	if end < 0 {
		t.Fatalf("examples/profiles/README.md's %s block does not end", lang)
	}
	return s[:end+1]
}
