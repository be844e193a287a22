package textdiff

import (
	"fmt"
	"io"
	"strings"
)

// Colors of the lines on a terminal (ANSI), as git diff uses them.
const (
	colorHeader = "\x1b[1m"
	colorHunk   = "\x1b[36m"
	colorAdd    = "\x1b[32m"
	colorDel    = "\x1b[31m"
	colorReset  = "\x1b[0m"
)

// Options tune Write.
type Options struct {
	// Context is the number of unchanged lines around each change (3 when
	// zero, as diff -u).
	Context int
	// Color writes ANSI colors.
	Color bool
	// Sections name parts of a (the objects of a multi-document file),
	// in order of their first lines. A hunk's header ends with the names
	// of the sections it changes, as git names the function a hunk is in:
	// "@@ -10,3 +10,9 @@ deployment.apps/web". patch(1) reads past them.
	Sections []Section
}

// Section is a part of the old text: from line Line (1-based) to the
// next section. NewLine, when not 0, is the line of the new text on which
// the same part begins: the texts are then compared part by part, each
// part against its own, which keeps the work proportional to the parts'
// sizes (comparing two whole files that differ in every part costs the
// number of changed lines times the files' length, in time and memory).
type Section struct {
	Line    int
	NewLine int
	Name    string
}

// op is one line of an edit script.
type op struct {
	kind byte // ' ', '-' or '+'
	text string
}

// Write writes the unified diff of a and b with the headers "--- from" and
// "+++ to", and reports whether they differ. Equal texts write nothing.
func Write(w io.Writer, from, to, a, b string, o Options) (bool, error) {
	if a == b {
		return false, nil
	}
	if o.Context == 0 {
		o.Context = 3
	}
	ops := scriptByParts(splitLines(a), splitLines(b), o.Sections)
	paint := func(color, s string) string {
		if !o.Color {
			return s
		}
		return color + s + colorReset
	}
	var sb strings.Builder
	sb.WriteString(paint(colorHeader, "--- "+from) + "\n")
	sb.WriteString(paint(colorHeader, "+++ "+to) + "\n")
	section := sectionsOf(ops, o.Sections)
	for _, h := range hunks(ops, o.Context) {
		header := fmt.Sprintf("@@ -%s +%s @@", rangeOf(h.aStart, h.aLen), rangeOf(h.bStart, h.bLen))
		if name := h.section(ops, section, o.Sections); name != "" {
			header += " " + name
		}
		sb.WriteString(paint(colorHunk, header) + "\n")
		for _, l := range ops[h.from:h.to] {
			line := string(l.kind) + strings.TrimSuffix(l.text, "\n")
			switch l.kind {
			case '+':
				line = paint(colorAdd, line)
			case '-':
				line = paint(colorDel, line)
			}
			sb.WriteString(line + "\n")
			if !strings.HasSuffix(l.text, "\n") {
				sb.WriteString("\\ No newline at end of file\n")
			}
		}
	}
	_, err := io.WriteString(w, sb.String())
	return true, err
}

func rangeOf(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// splitLines keeps each line's end, so a missing final newline shows.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// scriptByParts is the edit script from a to b made of the scripts of
// each part the sections align (Section.NewLine), in order: a valid
// script whatever the sections say, as the parts cut both texts at lines
// in increasing order. A section whose lines do not come after the
// previous one's in both texts is not a cut; without any NewLine the
// script is that of the whole texts.
func scriptByParts(a, b []string, sections []Section) []op {
	type cut struct{ a, b int }
	cuts := []cut{{0, 0}}
	for _, s := range sections {
		c, last := cut{s.Line - 1, s.NewLine - 1}, cuts[len(cuts)-1]
		if s.NewLine > 0 && c.a >= last.a && c.b >= last.b && c.a <= len(a) && c.b <= len(b) {
			cuts = append(cuts, c)
		}
	}
	cuts = append(cuts, cut{len(a), len(b)})
	var ops []op
	for i := 0; i+1 < len(cuts); i++ {
		ops = append(ops, script(a[cuts[i].a:cuts[i+1].a], b[cuts[i].b:cuts[i+1].b])...)
	}
	return ops
}

// script is a shortest edit script from a to b (Myers' algorithm): fast
// when the texts differ little, as an injection's do.
func script(a, b []string) []op {
	n, m := len(a), len(b)
	max := n + m
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[max+k-1] < v[max+k+1]) {
				x = v[max+k+1]
			} else {
				x = v[max+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[max+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, max)
			}
		}
	}
	return nil
}

func backtrack(trace [][]int, a, b []string, max int) []op {
	x, y := len(a), len(b)
	var rev []op
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		k := x - y
		var prevK int
		if k == -d || (k != d && v[max+k-1] < v[max+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v[max+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, op{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, op{'+', b[y-1]})
			} else {
				rev = append(rev, op{'-', a[x-1]})
			}
		}
		x, y = prevX, prevY
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}

// hunk is a run of ops[from:to] with its line ranges (1-based).
type hunk struct {
	from, to     int
	aStart, aLen int
	bStart, bLen int
}

// sectionsOf gives every op the index of the section of a it belongs to
// (-1 before the first one, or with no sections). A line added belongs
// where the line before it is: text added at the end of a document is
// that document's change, not the next one's.
func sectionsOf(ops []op, sections []Section) []int {
	// The lines visited never decrease (an added line counts as the line
	// before it), so one pass over the sections does.
	out := make([]int, len(ops))
	aLine, k := 1, -1
	for idx, o := range ops {
		line := aLine
		if o.kind == '+' {
			line = aLine - 1
		}
		for k+1 < len(sections) && sections[k+1].Line <= line {
			k++
		}
		out[idx] = k
		if o.kind != '+' {
			aLine++
		}
	}
	return out
}

// section names the sections a hunk changes ("" when none).
func (h hunk) section(ops []op, section []int, sections []Section) string {
	var names []string
	last := -1
	for idx := h.from; idx < h.to; idx++ {
		if k := section[idx]; ops[idx].kind != ' ' && k >= 0 && k != last {
			names = append(names, sections[k].Name)
			last = k
		}
	}
	return strings.Join(names, ", ")
}

// hunks groups the changes with context lines around them.
func hunks(ops []op, context int) []hunk {
	var out []hunk
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		from := max(0, i-context)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*context {
				break
			}
		}
		to := min(len(ops), end+1+context)
		out = append(out, hunk{from: from, to: to})
		i = to
	}
	// Line numbers.
	aLine, bLine, k := 1, 1, 0
	for idx := range ops {
		if k < len(out) && idx == out[k].from {
			out[k].aStart, out[k].bStart = aLine, bLine
		}
		if k < len(out) && idx >= out[k].from && idx < out[k].to {
			if ops[idx].kind != '+' {
				out[k].aLen++
			}
			if ops[idx].kind != '-' {
				out[k].bLen++
			}
		}
		if ops[idx].kind != '+' {
			aLine++
		}
		if ops[idx].kind != '-' {
			bLine++
		}
		if k < len(out) && idx == out[k].to-1 {
			k++
		}
	}
	return out
}
