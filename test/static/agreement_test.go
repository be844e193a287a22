package static

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/staticcases"
	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/staticdir"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestValidateAgreesWithAPIServer puts each hand edit that the
// validation refuses (staticcases.Cases) into the directory the API
// server reads: the API server refuses its reload too (its failure count
// grows, not its success count) and keeps injecting.
func TestValidateAgreesWithAPIServer(t *testing.T) {
	setup(t)
	in, err := inject.NewDefault(inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.CompileStatic(in, "")
	if err != nil {
		t.Fatal(err)
	}
	good, err := p.StaticFiles()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { writeStatic(t) })
	run := func(tc staticcases.Case, refused bool) {
		files := append([]admission.StaticFile(nil), good...)
		files[tc.File].Data = []byte(tc.Edit(string(good[tc.File].Data)))
		if err := staticdir.Validate(files); err == nil {
			t.Fatalf("%s: the validation passes", tc.Name)
		}
		want := "success"
		if refused {
			want = "failure"
		}
		successes, failures := reloads(t, "success"), reloads(t, "failure")
		target := filepath.Join(staticDir, filepath.FromSlash(files[tc.File].Path))
		tmp := target + ".tmp"
		if err := os.WriteFile(tmp, files[tc.File].Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, target); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		status := ""
		for status == "" {
			switch {
			case reloads(t, "success") != successes:
				status = "success"
			case reloads(t, "failure") != failures:
				status = "failure"
			case time.Since(start) > 2*time.Minute:
				t.Fatalf("%s: no reload counted %v after the file was written", tc.Name, time.Since(start))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if status != want {
			t.Errorf("%s: the API server's reload: %s, want %s", tc.Name, status, want)
		}
		t.Logf("%s: the API server's reload: %s, %v after the file was written", tc.Name, status, time.Since(start).Round(time.Millisecond))
		waitInjecting(t, staticNS, "")
		// The good set again before the next edit: the API server runs it
		// when the hash it reports is the directory's (after a refused
		// load it never stopped running it).
		if err := os.WriteFile(tmp, good[tc.File].Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, target); err != nil {
			t.Fatal(err)
		}
		want, err := staticdir.Hash(filepath.Join(staticDir, admission.StaticMutatingDir))
		if err != nil {
			t.Fatal(err)
		}
		for served(t) != want {
			if time.Since(start) > 2*time.Minute {
				t.Fatalf("%s: the good set not run again: served %q, directory %q", tc.Name, served(t), want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, tc := range staticcases.Cases {
		run(tc, true)
	}
}
