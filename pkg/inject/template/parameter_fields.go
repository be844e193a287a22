package template

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fields a parameter names: "LIST[NAME].a.b[KEY].c", read and set in a
// template item.

// FieldStep is one step of a parameter's field below the template item.
type FieldStep struct {
	Field string
	// Key, when set, selects in the list Field the item named Key, or in a
	// list of strings the word after the flag Key.
	Key    string
	HasKey bool
}

// fieldPath is a parsed Parameter.Field.
type fieldPath struct {
	list, item string
	steps      []FieldStep
}

// parseFieldPath reads "LIST[NAME].a.b[KEY].c".
func parseFieldPath(s string) (fieldPath, error) {
	var steps []FieldStep
	rest := s
	for rest != "" {
		var step FieldStep
		i := strings.IndexAny(rest, ".[")
		if i < 0 {
			i = len(rest)
		}
		step.Field = rest[:i]
		rest = rest[i:]
		if strings.HasPrefix(rest, "[") {
			end := strings.Index(rest, "]")
			if end < 0 {
				return fieldPath{}, fmt.Errorf("%q: unclosed [", s)
			}
			step.Key, step.HasKey = rest[1:end], true
			if step.Key == "" {
				return fieldPath{}, fmt.Errorf("%q: empty []", s)
			}
			rest = rest[end+1:]
		}
		if step.Field == "" {
			return fieldPath{}, fmt.Errorf("%q: empty field name", s)
		}
		steps = append(steps, step)
		if rest != "" {
			if rest[0] != '.' || len(rest) == 1 {
				return fieldPath{}, fmt.Errorf("%q: want field names joined by '.'", s)
			}
			rest = rest[1:]
		}
	}
	if len(steps) < 2 || !steps[0].HasKey {
		return fieldPath{}, fmt.Errorf("%q: want containers[NAME].FIELD, initContainers[NAME].FIELD or volumes[NAME].FIELD", s)
	}
	switch steps[0].Field {
	case "containers", "initContainers", "volumes":
	default:
		return fieldPath{}, fmt.Errorf("%q: %s: want containers, initContainers or volumes", s, steps[0].Field)
	}
	return fieldPath{list: steps[0].Field, item: steps[0].Key, steps: steps[1:]}, nil
}

// getPath returns the scalar at steps below n.
func getPath(n *yaml.Node, steps []FieldStep) (string, bool) {
	for i, st := range steps {
		n = nodes.MapValue(n, st.Field)
		if n == nil {
			return "", false
		}
		if !st.HasKey {
			continue
		}
		if n.Kind != yaml.SequenceNode {
			return "", false
		}
		if i == len(steps)-1 && isFlagList(n) {
			_, v := flagWord(n, st.Key)
			if v == nil {
				return "", false
			}
			return flagValue(v, st.Key), true
		}
		n = nodes.ItemByName(n, st.Key)
		if n == nil {
			return "", false
		}
	}
	if n.Kind != yaml.ScalarNode || nodes.IsNull(n) {
		return "", false
	}
	return n.Value, true
}

// setPath sets the scalar at steps below n to value, creating what is
// missing. A scalar keeps its tag and quoting where the value allows it.
func setPath(n *yaml.Node, steps []FieldStep, value string, pt ParameterType) error {
	for i, st := range steps {
		last := i == len(steps)-1
		next := nodes.MapValue(n, st.Field)
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: is not a mapping", st.Field)
		}
		switch {
		case next == nil && st.HasKey:
			next = nodes.NewSequence()
			n.Content = append(n.Content, nodes.NewString(st.Field), next)
		case next == nil && last:
			n.Content = append(n.Content, nodes.NewString(st.Field), typedScalar(nil, value, pt))
			return nil
		case next == nil:
			next = nodes.NewMapping()
			n.Content = append(n.Content, nodes.NewString(st.Field), next)
		case last && !st.HasKey:
			if next.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: is not a single value", st.Field)
			}
			*next = *typedScalar(next, value, pt)
			return nil
		}
		if !st.HasKey {
			n = next
			continue
		}
		if next.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s: is not a list", st.Field)
		}
		if last && isFlagList(next) {
			setFlag(next, st.Key, value)
			return nil
		}
		item := nodes.ItemByName(next, st.Key)
		if item == nil {
			item = nodes.NewMapping()
			item.Content = append(item.Content, nodes.NewString("name"), nodes.NewString(st.Key))
			next.Content = append(next.Content, item)
		}
		n = item
	}
	return nil
}

// isFlagList reports whether seq is a list of words (args, command) rather
// than a list of named items.
func isFlagList(seq *yaml.Node) bool {
	for _, item := range seq.Content {
		if item.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// flagWord finds the flag in a list of words (FlagWord).
func flagWord(seq *yaml.Node, flag string) (index int, word *yaml.Node) {
	words := make([]string, len(seq.Content))
	for i, w := range seq.Content {
		words[i] = w.Value
	}
	index, _ = FlagWord(words, flag)
	if index < 0 {
		return -1, nil
	}
	return index, seq.Content[index]
}

// FlagWord finds the word of words (args, command) that holds the flag's
// value: "--flag=V" (prefix is "--flag=") or the word after "--flag"
// (prefix is ""). index is -1 when the flag is not there with a value.
// A parameter whose field ends in args[--flag] reads and sets that word.
func FlagWord(words []string, flag string) (index int, prefix string) {
	for i, w := range words {
		switch {
		case strings.HasPrefix(w, flag+"="):
			return i, flag + "="
		case w == flag && i+1 < len(words):
			return i + 1, ""
		}
	}
	return -1, ""
}

func flagValue(w *yaml.Node, flag string) string {
	if v, ok := strings.CutPrefix(w.Value, flag+"="); ok {
		return v
	}
	return w.Value
}

// setFlag sets the flag's value in a list of words, appending the flag and
// its value when it is missing.
func setFlag(seq *yaml.Node, flag, value string) {
	_, w := flagWord(seq, flag)
	switch {
	case w == nil:
		seq.Content = append(seq.Content, nodes.NewString(flag), nodes.NewString(value))
	case strings.HasPrefix(w.Value, flag+"="):
		*w = *typedScalar(w, flag+"="+value, TypeString)
	default:
		*w = *typedScalar(w, value, TypeString)
	}
}

// typedScalar returns a scalar holding value: a string (quoted where
// needed), or an integer where the old node was one and the value is one.
func typedScalar(old *yaml.Node, value string, pt ParameterType) *yaml.Node {
	n := nodes.NewString(value)
	if old != nil {
		n.Style = old.Style
		if old.Tag == "!!int" && ascii.IsDecimalInt(value) {
			n.Tag = "!!int"
		}
		return n
	}
	if pt.Integer() {
		n.Tag = "!!int"
	}
	return n
}
