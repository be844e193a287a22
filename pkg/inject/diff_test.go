package inject_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// checkDiff checks that injecting into one document (without a status
// record) only adds: every line of the input is in the output, in order,
// unless it changed in one of the documented ways (lineChange), and the
// number of lines added is what the records and the template account for.
func checkDiff(t *testing.T, tpl *template.Template, in, out string) {
	t.Helper()
	old, cur := strings.Split(in, "\n"), strings.Split(out, "\n")
	var changes lineChanges
	for _, h := range diffLines(old, cur) {
		if err := changes.match(h.old, h.new, cur); err != nil {
			t.Errorf("%v\nin:\n%s\nout:\n%s", err, in, out)
			return
		}
	}
	records := statusRecords(t, out)
	growth := len(cur) - len(old)
	switch {
	case isLaidOutJSON(in):
		if want := expectedJSONGrowth(t, tpl, records, changes.splits); growth != want {
			t.Errorf("%d lines added, but the status records and the template account for %d:\n%s", growth, want, out)
		}
	case !strings.ContainsAny(in, "{}[]"):
		if want := expectedYAMLGrowth(t, tpl, records); growth != want {
			t.Errorf("%d lines added, but the status records and the template account for %d:\n%s", growth, want, out)
		}
	}
}

// hunk is a run of input lines replaced by a run of output lines.
type hunk struct{ old, new []string }

// diffLines aligns the lines of a and b on a longest common subsequence
// and returns the runs that differ.
func diffLines(a, b []string) []hunk {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []hunk
	var h hunk
	i, j := 0, 0
	flush := func() {
		if len(h.old)+len(h.new) > 0 {
			out = append(out, h)
		}
		h = hunk{}
	}
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			h.new = append(h.new, b[j])
			j++
		default:
			h.old = append(h.old, a[i])
			i++
		}
	}
	flush()
	return out
}

// lineChanges counts the documented changes of input lines.
type lineChanges struct {
	// splits counts empty collections and nulls whose closing bracket went
	// to a line of its own (indented JSON).
	splits int
}

// match pairs each changed input line of a hunk with an output line it
// became, in order; the output lines left over are added lines. all is the
// whole output, where a split collection's closing line must be.
func (c *lineChanges) match(old, new, all []string) error {
	k := 0
	for _, line := range old {
		found := false
		for ; k < len(new) && !found; k++ {
			closing, split, ok := lineChange(line, new[k])
			if !ok {
				continue
			}
			found = true
			if split {
				c.splits++
				if !hasLine(all, closing) {
					return fmt.Errorf("the empty collection of input line %q was opened, but no output line closes it with %q", line, closing)
				}
			}
		}
		trimmed := strings.TrimLeft(strings.TrimSuffix(line, "\r"), " \t")
		switch {
		case found:
		case trimmed == "":
			// Blank space between the brackets of an empty collection,
			// replaced by the items (kept in the record's "empty").
		case strings.HasPrefix(trimmed, "]") || strings.HasPrefix(trimmed, "}"):
			// The closing bracket of such a collection, indented as
			// encoding/json indents it.
			if !hasLine(all, trimmed) {
				return fmt.Errorf("the diff removes the closing line %q", line)
			}
		default:
			return fmt.Errorf("the diff changes the input line %q, not in a documented way", line)
		}
	}
	return nil
}

// hasLine reports whether some line of lines is text, indented.
func hasLine(lines []string, text string) bool {
	for _, l := range lines {
		if strings.TrimLeft(strings.TrimSuffix(l, "\r"), " \t") == text {
			return true
		}
	}
	return false
}

// lineChange reports whether input line old became output line new in a
// documented way:
//   - it gained one trailing comma (JSON, an item appended after it);
//   - flow items went into one of its flow collections (balanced text
//     inserted after an opening bracket, before a closing one, or beside
//     an item), or in place of a null;
//   - a null after a key's colon went, the items following on the lines
//     below (block style);
//   - an empty flow collection or a null on it was opened, the items and
//     the closing bracket following on lines below (indented JSON):
//     closing is then that bracket with the rest of the line, and split is
//     true.
func lineChange(old, new string) (closing string, split, ok bool) {
	if strings.HasSuffix(old, "\r") != strings.HasSuffix(new, "\r") {
		return "", false, false
	}
	old, new = strings.TrimSuffix(old, "\r"), strings.TrimSuffix(new, "\r")
	if new == old+"," {
		return "", false, true
	}
	m := lineMatcher{old: old, new: new, failed: map[[2]int]bool{}}
	ok = m.match(0, 0)
	return m.closing, m.closing != "", ok
}

type lineMatcher struct {
	old, new string
	failed   map[[2]int]bool
	closing  string
}

func (m *lineMatcher) match(i, j int) bool {
	if m.failed[[2]int{i, j}] {
		return false
	}
	if m.try(i, j) {
		return true
	}
	m.failed[[2]int{i, j}] = true
	return false
}

func (m *lineMatcher) try(i, j int) bool {
	old, new := m.old, m.new
	if j == len(new) {
		if i == len(old) {
			return true
		}
		if i+1 < len(old) && old[i] == ' ' && afterColon(old, i+1) {
			if tok := nullTokenAt(old, i+1); tok > 0 && i+1+tok == len(old) {
				return true // "volumes: null" became "volumes:"
			}
		}
		return j > 0 && m.split(i, new[j-1])
	}
	if i < len(old) && old[i] == new[j] && m.match(i+1, j+1) {
		return true
	}
	// Flow items inserted.
	for _, k := range balancedEnds(new, j) {
		if (k == len(new) || i < len(old) && new[k] == old[i]) && m.match(i, k) {
			return true
		}
	}
	// Block style: " null" after a key's colon went, the rest of the line
	// (a comment) stays.
	if i+1 < len(old) && old[i] == ' ' && afterColon(old, i+1) {
		if tok := nullTokenAt(old, i+1); tok > 0 && isLineRest(old[i+1+tok:]) && old[i+1+tok:] == new[j:] {
			return true
		}
	}
	if i == len(old) {
		return false
	}
	tok := nullTokenAt(old, i)
	if tok == 0 || !afterColon(old, i) {
		return false
	}
	// A null replaced by a flow collection, or opened across lines.
	if new[j] == '[' || new[j] == '{' {
		for _, k := range balancedEnds(new, j) {
			if m.match(i+tok, k) {
				return true
			}
		}
		if j+1 == len(new) && isLineRest(old[i+tok:]) {
			m.closing = closer(new[j]) + strings.TrimLeft(old[i+tok:], " \t")
			return true
		}
	}
	return false
}

// split reports whether the rest of the input line, after the opening
// bracket open that ends the output line, is the inside of an empty
// collection: blank space, its closing bracket, and the line's rest.
func (m *lineMatcher) split(i int, open byte) bool {
	if open != '[' && open != '{' || i == 0 || m.old[i-1] != open {
		return false
	}
	rest := strings.TrimLeft(m.old[i:], " \t")
	if !strings.HasPrefix(rest, closer(open)) {
		return false
	}
	m.closing = rest
	return true
}

func closer(open byte) string {
	if open == '[' {
		return "]"
	}
	return "}"
}

// nullTokenAt returns the length of the null token at old[i] that stands
// alone (followed by the end of the line, blank space, a comma or a
// closing bracket), 0 when there is none.
func nullTokenAt(old string, i int) int {
	for _, tok := range []string{"null", "Null", "NULL", "~"} {
		if strings.HasPrefix(old[i:], tok) {
			rest := old[i+len(tok):]
			if rest == "" || strings.ContainsAny(rest[:1], " \t,]}") {
				return len(tok)
			}
		}
	}
	return 0
}

// afterColon reports whether old[i] is a value: only blank space between
// it and a colon before it.
func afterColon(old string, i int) bool {
	before := strings.TrimRight(old[:i], " \t")
	return strings.HasSuffix(before, ":")
}

// isLineRest reports whether s can follow a value at the end of a line:
// nothing, a comma, or a comment.
func isLineRest(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return s == "" || s == "," || s[0] == '#'
}

// balancedEnds returns the offsets k > j such that s[j:k] closes every
// bracket and quote it opens.
func balancedEnds(s string, j int) []int {
	var ends []int
	depth := 0
	for k := j; k < len(s); k++ {
		switch c := s[k]; c {
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth < 0 {
				return ends
			}
		case '"', '\'':
			end := quotedEnd(s, k)
			if end < 0 {
				return ends
			}
			k = end - 1
		}
		if depth == 0 {
			ends = append(ends, k+1)
		}
	}
	return ends
}

// quotedEnd returns the offset past the quoted string opening at s[i], -1
// when it is not closed.
func quotedEnd(s string, i int) int {
	q := s[i]
	for k := i + 1; k < len(s); k++ {
		switch {
		case q == '"' && s[k] == '\\':
			k++
		case q == '\'' && s[k] == '\'' && k+1 < len(s) && s[k+1] == '\'':
			k++
		case s[k] == q:
			return k + 1
		}
	}
	return -1
}

// changedLines returns the lines of before that are not in after, in order.
func changedLines(before, after string) []string {
	var out []string
	for _, h := range diffLines(strings.Split(before, "\n"), strings.Split(after, "\n")) {
		out = append(out, h.old...)
	}
	return out
}
