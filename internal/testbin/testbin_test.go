package testbin

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// outcome records how a test helper ended a test: skipped or failed,
// with its message. Its Fatalf and Skipf stop the helper as the testing
// package's do (by unwinding), so what follows them is not run.
type outcome struct {
	testing.TB
	how, msg string
}

type stopped struct{}

func (o *outcome) Helper() {}
func (o *outcome) Fatalf(format string, args ...any) {
	o.how, o.msg = "fail", fmt.Sprintf(format, args...)
	panic(stopped{})
}
func (o *outcome) Skipf(format string, args ...any) {
	o.how, o.msg = "skip", fmt.Sprintf(format, args...)
	panic(stopped{})
}

// run calls f with an outcome and returns it ("pass" when f returned).
func run(f func(testing.TB)) (o *outcome) {
	o = &outcome{how: "pass"}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopped); !ok {
				panic(r)
			}
		}
	}()
	f(o)
	return o
}

// TestMissing: a missing tool fails the test, naming what installs it,
// except in a -short run outside CI, which skips it; a missing service
// skips it except in CI.
func TestMissing(t *testing.T) {
	short := flag.Lookup("test.short")
	was := short.Value.String()
	t.Cleanup(func() { _ = short.Value.Set(was) })
	for _, c := range []struct {
		name      string
		short, ci bool
		f         func(testing.TB, string, ...any)
		want      string
		// makeTools: the message names make tools, which installs
		// every tool.
		makeTools bool
	}{
		{"a tool, go test ./...", false, false, Missing, "fail", true},
		{"a tool, go test -short ./...", true, false, Missing, "skip", false},
		{"a tool, -short in CI", true, true, Missing, "fail", true},
		{"a tool in CI", false, true, Missing, "fail", true},
		{"a service, go test ./...", false, false, Unavailable, "skip", false},
		{"a service in CI", false, true, Unavailable, "fail", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := short.Value.Set(fmt.Sprint(c.short)); err != nil {
				t.Fatal(err)
			}
			t.Setenv("CI", map[bool]string{true: "true", false: ""}[c.ci])
			o := run(func(tb testing.TB) { c.f(tb, "kwok not found: run %s", "hack/install-tools.sh") })
			if o.how != c.want || !strings.Contains(o.msg, "kwok not found: run hack/install-tools.sh") {
				t.Errorf("%s %q, want %s with the message", o.how, o.msg, c.want)
			}
			if strings.Contains(o.msg, "make tools") != c.makeTools {
				t.Errorf("%q names make tools: %v, want %v", o.msg, !c.makeTools, c.makeTools)
			}
		})
	}
}

// TestNeedTool: a tool in neither the cache nor PATH fails the test with
// the script that installs it; one in the cache is found there first.
func TestNeedTool(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("KINJECT_CACHE", cache)
	t.Setenv("PATH", "")
	t.Setenv("CI", "")
	o := run(func(tb testing.TB) { NeedTool(tb, "kustomize") })
	want := "fail" // -short outside CI skips, as the fast tests need no tools
	if testing.Short() {
		want = "skip"
	}
	if o.how != want || !strings.Contains(o.msg, "kustomize not found in "+cache+"/bin nor on PATH: run hack/install-tools.sh") {
		t.Errorf("%s %q, want %s naming hack/install-tools.sh", o.how, o.msg, want)
	}
	WriteFile(t, cache+"/bin/kustomize", "#!/bin/sh\n")
	if err := chmodX(cache + "/bin/kustomize"); err != nil {
		t.Fatal(err)
	}
	if got := NeedTool(t, "kustomize"); got != cache+"/bin/kustomize" {
		t.Errorf("NeedTool = %q, want the cache's", got)
	}
}

func chmodX(path string) error { return os.Chmod(path, 0o755) }
