package staticdir

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/staticcases"
	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

func defaultFiles(t *testing.T, settings inject.Settings) []admission.StaticFile {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), settings)
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.CompileStatic(in, "")
	if err != nil {
		t.Fatal(err)
	}
	files, err := p.StaticFiles()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The default policy, in every profile and mode, is one object per file,
// named with the static suffix, in its plugin's directory, and valid.
func TestStaticFilesValid(t *testing.T) {
	for _, settings := range []inject.Settings{{}, {Profile: "logs"}, {Policy: inject.Policy{Mode: inject.OptIn}}} {
		files := defaultFiles(t, settings)
		base := admission.ObjectName("", settings.Profile)
		want := []string{
			"mutating/" + base + ".policy.yaml", "mutating/" + base + ".binding.yaml",
			"validating/" + base + "-conflicts.policy.yaml", "validating/" + base + "-conflicts.binding.yaml",
		}
		if len(files) != len(want) {
			t.Fatalf("%d files, want %d", len(files), len(want))
		}
		for i, f := range files {
			if f.Path != want[i] {
				t.Errorf("file %d: %s, want %s", i, f.Path, want[i])
			}
			if !strings.HasSuffix(f.Name, ".static.k8s.io") || bytes.Count(f.Data, []byte("\nkind: ")) != 1 {
				t.Errorf("%s: name %s, %d kinds: want one object named *.static.k8s.io", f.Path, f.Name, bytes.Count(f.Data, []byte("\nkind: ")))
			}
			if bytes.Contains(f.Data, []byte("paramRef")) || bytes.Contains(f.Data, []byte("paramKind")) {
				t.Errorf("%s: a static manifest with a parameter", f.Path)
			}
		}
		if err := Validate(files); err != nil {
			t.Errorf("profile %q: %v", settings.Profile, err)
		}
	}
}

// Write writes every file, whole, and nothing else; a second Write
// changes nothing; Check reports a changed and a missing file with a
// diff; Hash is the API server's: SHA-256 of the files in name order,
// each followed by a zero byte.
func TestWriteCheckHash(t *testing.T) {
	dir := t.TempDir()
	files := defaultFiles(t, inject.Settings{})
	written, err := Write(dir, files)
	if err != nil || len(written) != 4 {
		t.Fatalf("Write: %v, %d written, want 4", err, len(written))
	}
	if written, err = Write(dir, files); err != nil || len(written) != 0 {
		t.Fatalf("Write again: %v, %d written, want 0", err, len(written))
	}
	var diff bytes.Buffer
	if n, err := Check(&diff, dir, files, textdiff.Options{}); n != 0 || err != nil || diff.Len() != 0 {
		t.Fatalf("Check of what was written: %d stale, %v, %q", n, err, diff.String())
	}
	mutating := filepath.Join(dir, "mutating")
	entries, _ := os.ReadDir(mutating)
	h := sha256.New()
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(mutating, e.Name()))
		h.Write(data)
		h.Write([]byte{0})
	}
	if len(entries) != 2 {
		t.Fatalf("mutating/ holds %d entries, want 2 (no temporary file left)", len(entries))
	}
	got, err := Hash(mutating)
	if want := fmt.Sprintf("sha256:%x", h.Sum(nil)); got != want || err != nil {
		t.Errorf("Hash = %s, %v; want %s", got, err, want)
	}
	policy := filepath.Join(dir, filepath.FromSlash(files[0].Path))
	if err := os.WriteFile(policy, []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(files[3].Path))); err != nil {
		t.Fatal(err)
	}
	diff.Reset()
	n, err := Check(&diff, dir, files, textdiff.Options{})
	if n != 2 || err != nil || !strings.Contains(diff.String(), "-# edited") || !strings.Contains(diff.String(), "--- /dev/null") {
		t.Fatalf("Check after an edit and a removal: %d stale, %v:\n%s", n, err, diff.String())
	}
}

// Every way a set could stop an API server is refused before anything is
// written, naming the file or object and the field.
func TestValidateRefuses(t *testing.T) {
	for _, tc := range staticcases.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			files := defaultFiles(t, inject.Settings{})
			before := string(files[tc.File].Data)
			after := tc.Edit(before)
			if after == before {
				t.Fatal("the edit changed nothing")
			}
			files[tc.File].Data = []byte(after)
			dir := t.TempDir()
			_, err := Write(dir, files)
			if err == nil {
				t.Fatal("written")
			}
			for _, w := range tc.Wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%d entries written", len(entries))
			}
		})
	}
}

// The AdmissionConfiguration names each plugin's own directory.
func TestStaticConfiguration(t *testing.T) {
	got := string(admission.StaticConfiguration("/etc/kubernetes/kinject"))
	for _, want := range []string{
		"kind: AdmissionConfiguration",
		"- name: MutatingAdmissionPolicy\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: MutatingAdmissionPolicyConfiguration\n    staticManifestsDir: /etc/kubernetes/kinject/mutating\n",
		"- name: ValidatingAdmissionPolicy\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: ValidatingAdmissionPolicyConfiguration\n    staticManifestsDir: /etc/kubernetes/kinject/validating\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("configuration lacks %q:\n%s", want, got)
		}
	}
}
