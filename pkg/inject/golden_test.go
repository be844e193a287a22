package inject_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenCase is one directory under testdata/golden: config.yaml (optional;
// the first document configures, later ConfigMaps serve templateRef),
// input.yaml, and the expectations expected.yaml and report.txt.
type goldenCase struct {
	name, dir string
	injector  *inject.Injector
	input     []byte
}

// caseDirs returns the case directories matching pattern; none is an error.
func caseDirs(t testing.TB, pattern string) []string {
	t.Helper()
	dirs, err := filepath.Glob(pattern)
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases match %s: %v", pattern, err)
	}
	return dirs
}

func loadGoldenCases(t testing.TB) []goldenCase {
	var cases []goldenCase
	for _, dir := range caseDirs(t, "testdata/golden/*") {
		in, err := NewInjectorFromFile(filepath.Join(dir, "config.yaml"))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		input := readFile(t, filepath.Join(dir, "input.yaml"))
		cases = append(cases, goldenCase{name: filepath.Base(dir), dir: dir, injector: in, input: input})
	}
	return cases
}

// NewInjectorFromFile builds the injector a golden case asks for.
func NewInjectorFromFile(path string) (*inject.Injector, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return inject.New(inject.DefaultTemplate(), inject.Settings{})
	}
	if err != nil {
		return nil, err
	}
	cfg, err := inject.ParseConfig(data, nil)
	if err != nil {
		return nil, err
	}
	tpl := cfg.Template
	if tpl == nil {
		tpl = inject.DefaultTemplate()
	}
	return inject.New(tpl, cfg.Settings)
}

// run applies op to a whole stream through the text path.
func run(t testing.TB, in *inject.Injector, op inject.Op, src []byte) ([]byte, inject.Report) {
	t.Helper()
	var out bytes.Buffer
	var report inject.Report
	err := manifest.Process(bytes.NewReader(src), &out, func(i int, doc []byte) []byte {
		res, entries := in.ProcessText(op, doc, i)
		report = append(report, entries...)
		return res
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), report
}

func reportText(r inject.Report) string {
	var b strings.Builder
	for _, e := range r {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, report := run(t, c.injector, inject.OpInject, c.input)
			checkGolden(t, filepath.Join(c.dir, "expected.yaml"), out)
			checkGolden(t, filepath.Join(c.dir, "report.txt"), []byte(reportText(report)))
			checkProperties(t, c.injector, c.input, out, report)
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/inject -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale (go test ./pkg/inject -update rewrites it); got:\n%s\nwant:\n%s", path, got, want)
	}
}
