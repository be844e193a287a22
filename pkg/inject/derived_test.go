package inject

import (
	"strconv"
	"testing"
)

// TestDerivedTemplatesShared: the same override values give the same
// template (workloads share its nodes and render cache); the cache keeps
// at most maxDerived sets, and a set past it still gets its template.
func TestDerivedTemplatesShared(t *testing.T) {
	t.Parallel()
	in, err := New(DefaultTemplate(), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if in.templateFor(nil) != in.template {
		t.Error("no values: not the injector's own template")
	}
	values := func(i int) map[string]string { return map[string]string{"cpu": strconv.Itoa(i+1) + "m"} }
	first := in.templateFor(values(0))
	if first == in.template || in.templateFor(values(0)) != first || len(in.derived.m) != 1 {
		t.Fatalf("the same values: another template, or %d cached", len(in.derived.m))
	}
	for i := range maxDerived + 10 {
		if in.templateFor(values(i)) == nil {
			t.Fatalf("values %d: no template", i)
		}
	}
	if len(in.derived.m) != maxDerived {
		t.Errorf("%d sets cached, want at most %d", len(in.derived.m), maxDerived)
	}
	if past := in.templateFor(values(maxDerived + 5)); past == in.template || past == in.templateFor(values(maxDerived+5)) {
		t.Error("a set past the bound: not its own template, or cached")
	}
}
