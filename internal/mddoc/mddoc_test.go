package mddoc

import (
	"reflect"
	"testing"
)

const doc = "# Title\n\nIntro [a](a.md) and `[not](code.md)`.\n\n## One\n\n```yaml\n# not a heading\nx: [y](z)\n```\n\n```sh\necho one\n```\n\n### Deeper\n\nsee [b](b.md#c\n) and [`c`](c.md#what-current-means)\n\n## What \"current\" means\n\n## One\n\n```sh\necho two\n```\n"

func TestSection(t *testing.T) {
	s, ok := Section(doc, "## One")
	if !ok {
		t.Fatal("no section")
	}
	if want := "## One\n\n```yaml\n# not a heading\nx: [y](z)\n```\n\n```sh\necho one\n```\n\n### Deeper\n\nsee [b](b.md#c\n) and [`c`](c.md#what-current-means)\n\n"; s != want {
		t.Errorf("section %q, want %q", s, want)
	}
	if b, ok := Block(s, "sh"); !ok || b != "echo one\n" {
		t.Errorf("block %q %v", b, ok)
	}
	if _, ok := Section(doc, "# not a heading"); ok {
		t.Error("a line of a fenced block taken for a heading")
	}
	if _, ok := Section(doc, "## On"); ok {
		t.Error("a heading matched by its prefix")
	}
}

func TestLinks(t *testing.T) {
	var got []string
	for _, l := range Links(doc) {
		got = append(got, l.Dest)
	}
	if want := []string{"a.md", "c.md#what-current-means"}; !reflect.DeepEqual(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
	if l := Links(doc); l[1].Line != 19 {
		t.Errorf("line %d, want 19", l[1].Line)
	}
}

func TestAnchors(t *testing.T) {
	want := map[string]bool{"title": true, "one": true, "deeper": true, "what-current-means": true, "one-1": true}
	if got := Anchors(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
	for heading, slug := range map[string]string{
		"Try it (two commands)":                       "try-it-two-commands",
		"The sidecar's ports":                         "the-sidecars-ports",
		"The pre-flight: `kubectl inject check`":      "the-pre-flight-kubectl-inject-check",
		"Why was my Pod (not) injected?":              "why-was-my-pod-not-injected",
		"Per-workload settings: override annotations": "per-workload-settings-override-annotations",
	} {
		if got := Slug(heading); got != slug {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, slug)
		}
	}
}
