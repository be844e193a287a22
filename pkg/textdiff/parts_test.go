package textdiff

import (
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"strings"
	"testing"
)

// apply gives the old (keep '-') or the new (keep '+') text of a script.
func apply(ops []op, keep byte) string {
	var sb strings.Builder
	for _, o := range ops {
		if o.kind == ' ' || o.kind == keep {
			sb.WriteString(o.text)
		}
	}
	return sb.String()
}

// TestScriptByPartsIsValid: whatever the sections say (lines in or out of
// order, past the end, right or wrong), the script made part by part turns
// the old text into the new one.
func TestScriptByPartsIsValid(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("line %d\n", rng.Intn(6))
		}
		return out
	}
	for i := 0; i < 2000; i++ {
		a, b := lines(rng.Intn(30)), lines(rng.Intn(30))
		var sections []Section
		for j := rng.Intn(6); j > 0; j-- {
			sections = append(sections, Section{Line: rng.Intn(35) - 2, NewLine: rng.Intn(35) - 2})
		}
		ops := scriptByParts(a, b, sections)
		if got, want := apply(ops, '-'), strings.Join(a, ""); got != want {
			t.Fatalf("sections %v: the script's old text %q, want %q", sections, got, want)
		}
		if got, want := apply(ops, '+'), strings.Join(b, ""); got != want {
			t.Fatalf("sections %v: the script's new text %q, want %q", sections, got, want)
		}
	}
}

// manyParts is a file of n documents, and the same file with lines added
// to each, with the sections that align them.
func manyParts(n, added int) (a, b string, sections []Section) {
	var sa, sb strings.Builder
	line, newLine := 1, 1
	for i := 0; i < n; i++ {
		sections = append(sections, Section{Line: line, NewLine: newLine, Name: fmt.Sprintf("pod/p%d", i)})
		doc := fmt.Sprintf("kind: Pod\nmetadata:\n  name: p%d\nspec:\n  containers:\n  - name: app\n", i)
		sa.WriteString(doc + "---\n")
		sb.WriteString(doc + strings.Repeat("  - name: sidecar\n", added) + "---\n")
		line += 7
		newLine += 7 + added
	}
	return sa.String(), sb.String(), sections
}

// TestDiffByPartsIsSmall: a file whose every document gains lines (what
// an injection does) is compared part by part. Compared whole, its
// script's search kept a copy of its state per changed line, each as long
// as both files: here about 900 MB; part by part, a few MB.
func TestDiffByPartsIsSmall(t *testing.T) {
	a, b, sections := manyParts(300, 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Write(io.Discard, "a", "b", a, b, Options{Sections: sections}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if mb := float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20); mb > 20 {
		t.Errorf("the diff allocated %.0f MB", mb)
	}
}

// TestDiffByPartsAsWhole: where the parts are where the documents are,
// the diff is the one of the whole texts.
func TestDiffByPartsAsWhole(t *testing.T) {
	a, b, sections := manyParts(5, 3)
	var parts, whole strings.Builder
	if _, err := Write(&parts, "a", "b", a, b, Options{Sections: sections}); err != nil {
		t.Fatal(err)
	}
	for i := range sections {
		sections[i].NewLine = 0
	}
	if _, err := Write(&whole, "a", "b", a, b, Options{Sections: sections}); err != nil {
		t.Fatal(err)
	}
	if parts.String() != whole.String() {
		t.Errorf("part by part:\n%s\nwhole:\n%s", parts.String(), whole.String())
	}
}
