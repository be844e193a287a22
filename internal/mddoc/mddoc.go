// Package mddoc reads the repository's Markdown documentation for the tests
// that hold it to what the code does: a section under a heading, the first
// fenced block of a language in it, the relative links of a file and the
// anchors its headings make. Fenced code blocks are never taken for
// headings or links.
package mddoc

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unicode"
)

// Root is the repository's root (the directory of go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// line is one line of a document and whether it lies in a fenced block
// (the fences included).
type line struct {
	text  string
	fence bool
}

func lines(doc string) []line {
	var out []line
	var open string // the fence that opened the current block
	for _, l := range strings.SplitAfter(doc, "\n") {
		if l == "" {
			continue
		}
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case open != "":
			out = append(out, line{l, true})
			if strings.HasPrefix(strings.TrimSpace(trimmed), open) && strings.Trim(strings.TrimSpace(trimmed), open[:1]) == "" {
				open = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence := trimmed[:3]
			for len(fence) < len(trimmed) && trimmed[len(fence)] == fence[0] {
				fence += fence[:1]
			}
			open = fence
			out = append(out, line{l, true})
		default:
			out = append(out, line{l, false})
		}
	}
	return out
}

// headingLevel is the level of a heading line (1 for "# x"), 0 for any
// other line.
func headingLevel(l line) int {
	if l.fence {
		return 0
	}
	s := strings.TrimRight(l.text, "\r\n")
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(s) || s[n] != ' ' {
		return 0
	}
	return n
}

// Section returns the heading line given (such as "## Helm", matched as
// the whole line) and everything after it up to the next heading of its
// level or a higher one.
func Section(doc, heading string) (string, bool) {
	ls := lines(doc)
	for i, l := range ls {
		level := headingLevel(l)
		if level == 0 || strings.TrimRight(l.text, "\r\n") != heading {
			continue
		}
		var b strings.Builder
		b.WriteString(l.text)
		for _, next := range ls[i+1:] {
			if n := headingLevel(next); n > 0 && n <= level {
				break
			}
			b.WriteString(next.text)
		}
		return b.String(), true
	}
	return "", false
}

// Block returns the content of the first fenced block of language lang
// (```sh) in section, its last line ending in "\n".
func Block(section, lang string) (string, bool) {
	ls := lines(section)
	for i, l := range ls {
		if !l.fence || strings.TrimSpace(l.text) != "```"+lang {
			continue
		}
		var b strings.Builder
		for _, next := range ls[i+1:] {
			if strings.TrimSpace(next.text) == "```" {
				return b.String(), true
			}
			b.WriteString(next.text)
		}
		return "", false
	}
	return "", false
}

// File reads the Markdown file at rel, a path from the repository's root.
func File(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// SectionOf returns Section of the file rel (a path from the repository's
// root, such as "docs/gitops.md"), and fails t, naming the file, when it
// has no such heading.
func SectionOf(t testing.TB, rel, heading string) string {
	t.Helper()
	s, ok := Section(File(t, rel), heading)
	if !ok {
		t.Fatalf("%s has no %q section", rel, heading)
	}
	return s
}

// ShBlock returns the first ```sh block of the section under heading in
// the file rel, and fails t, naming the file, when there is none.
func ShBlock(t testing.TB, rel, heading string) string {
	t.Helper()
	block, ok := Block(SectionOf(t, rel, heading), "sh")
	if !ok {
		t.Fatalf("%s's %q section has no complete sh block", rel, heading)
	}
	return block
}

var (
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	link     = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
)

// Link is a link of a document: its destination and the line it is on.
type Link struct {
	Dest string
	Line int
}

// Links returns the inline links of doc outside fenced blocks and code
// spans, in order.
func Links(doc string) []Link {
	var text strings.Builder
	for _, l := range lines(doc) {
		if l.fence {
			text.WriteString("\n") // keep the line numbers
			continue
		}
		text.WriteString(l.text)
	}
	// Code spans may run across lines: blank them out as a whole, newlines
	// kept.
	s := codeSpan.ReplaceAllStringFunc(text.String(), func(span string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, span)
	})
	var out []Link
	for _, m := range link.FindAllStringSubmatchIndex(s, -1) {
		out = append(out, Link{Dest: s[m[4]:m[5]], Line: 1 + strings.Count(s[:m[0]], "\n")})
	}
	return out
}

// Anchors returns the fragment identifiers GitHub gives the headings of
// doc: the heading's text without its formatting, in lower case, with
// punctuation dropped and spaces as hyphens; a repeated one gets -1, -2...
func Anchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range lines(doc) {
		level := headingLevel(l)
		if level == 0 {
			continue
		}
		slug := Slug(strings.TrimSpace(strings.TrimRight(l.text, "\r\n")[level:]))
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

var inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// Slug is the anchor GitHub makes of a heading's text.
func Slug(heading string) string {
	heading = inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Generated holds the part of the document rel (from the repository's
// root) between the lines "<!-- name: begin -->" and "<!-- name: end -->"
// to want, the text the code generates: it fails the test where they
// differ and, with update, rewrites that part instead. how says which
// command updates it.
func Generated(t testing.TB, rel, name, want string, update bool, how string) {
	t.Helper()
	path := filepath.Join(Root(), rel)
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+": begin -->\n", "<!-- "+name+": end -->\n"
	before, rest, ok := strings.Cut(string(doc), begin)
	got, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("%s: no %q ... %q", rel, begin, end)
	}
	if got == want {
		return
	}
	if update {
		if err := os.WriteFile(path, []byte(before+begin+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the %s differ from what the code generates (%s):\n%s\nwant:\n%s", rel, name, how, got, want)
}
