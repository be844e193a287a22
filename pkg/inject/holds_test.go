package inject

import "testing"

// TestHolds writes out when the Pod's value holds the template's: lists
// of words whole, other lists item by item (an empty mapping holds any
// item), an absent list holds an empty one, a scalar never holds a list;
// quantity fields by value, and no path is not a quantity field.
func TestHolds(t *testing.T) {
	t.Parallel()
	empty := map[string]any{}
	for _, c := range []struct {
		name      string
		got, want any
		path      []string
		holds     bool
	}{
		{"an absent list, an empty one", nil, []any{}, nil, true},
		{"an empty list, an empty one", []any{}, []any{}, nil, true},
		{"a scalar, an empty list", "x", []any{}, nil, false},
		{"a scalar, a list", "x", []any{"x"}, nil, false},
		{"words, whole", []any{"a", "b"}, []any{"a", "b"}, nil, true},
		{"words, one more", []any{"a", "b", "c"}, []any{"a", "b"}, nil, false},
		{"an empty mapping holds the item", []any{map[string]any{"x": 1}, map[string]any{"a": 1}}, []any{empty, map[string]any{"a": 1}}, nil, true},
		{"the other item differs", []any{map[string]any{"x": 1}, map[string]any{"a": 2}}, []any{empty, map[string]any{"a": 1}}, nil, false},
		{"a mapping item, compared", []any{map[string]any{"a": 2}}, []any{map[string]any{"a": 1}}, nil, false},
		{"a quantity by value", "1000m", "1", []string{"resources", "limits", "cpu"}, true},
		{"not a quantity field", "1000m", "1", []string{"env"}, false},
		{"a key unset", map[string]any{}, map[string]any{"a": 1}, nil, false},
		{"a key null", map[string]any{"a": nil}, map[string]any{"a": 1}, nil, false},
	} {
		if got := holds(c.got, c.want, c.path); got != c.holds {
			t.Errorf("%s: holds = %v, want %v", c.name, got, c.holds)
		}
	}
	for _, path := range [][]string{nil, {}, {"resources"}, {"env", "value"}} {
		if IsQuantityField(path) {
			t.Errorf("%q is a quantity field", path)
		}
	}
	for _, path := range [][]string{{"resources", "limits"}, {"resources", "requests", "memory"}, {"emptyDir", "sizeLimit"}} {
		if !IsQuantityField(path) {
			t.Errorf("%q is not a quantity field", path)
		}
	}
}
