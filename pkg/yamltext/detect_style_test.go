package yamltext

import "testing"

// TestDetectStyle: the indentation step and the width of sequences
// learned from the first examples of a text, written out.
func TestDetectStyle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		src  string
		step int
		wide bool
	}{
		{"a step of 2", "a:\n  b: 1\n", 2, false},
		{"a step of 4", "a:\n    b: 1\n", 4, false},
		{"blank lines and comments between a key and its child", "a:\n\n  # c\n    b: 1\n", 4, false},
		{"a step of 8, the widest learned", "a:\n        b: 1\n", 8, false},
		{"a step of 9 is not learned", "a:\n         b: 1\n", 2, false},
		{"a step of 1 is not learned", "a:\n b: 1\n", 2, false},
		{"a key in a sequence's item", "- a:\n    b: 1\n", 2, false},
		{"a compact sequence", "a:\n- x\n", 2, false},
		{"a wide sequence", "a:\n  - x\n", 2, true},
		{"the first sequence decides", "a:\n- x\nb:\n  - y\n", 2, false},
		{"compact at a step of 3", "a:\n   b:\n    - x\n", 3, false},
		{"wide at a step of 3", "a:\n   b:\n      - x\n", 3, true},
		{"a key with no child", "a:\nb: 1\nc:\n    d: 1\n", 4, false},
	} {
		td := newTextDoc([]byte(c.src))
		td.detectStyle()
		if td.indentStep != c.step || td.wideSeq != c.wide {
			t.Errorf("%s: step %d, wide %v; want %d, %v", c.name, td.indentStep, td.wideSeq, c.step, c.wide)
		}
	}
}
