package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// isNullToken reports whether s is written YAML for null.
func isNullToken(s string) bool { return slices.Contains(nullTokens, s) }

// Parse reads the record held in annotation key (a profile's status
// annotation, naming.StatusAnnotationFor) strictly: unknown fields,
// missing fields and wrong types are errors, because a hand-edited record
// cannot be trusted to undo an injection.
func Parse(key, value string) (*Status, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	dec.DisallowUnknownFields()
	var s Status
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("annotation %s: not a valid status record: %w", key, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("annotation %s: not a valid status record: trailing data", key)
	}
	if s.Version != Version {
		return nil, fmt.Errorf("annotation %s: status version %d is not supported (want %d)", key, s.Version, Version)
	}
	if s.Template == "" {
		return nil, fmt.Errorf("annotation %s: status record has no template hash", key)
	}
	for field, token := range s.NullTokens {
		if !s.WasNull(field) || !isNullToken(token) {
			return nil, fmt.Errorf("annotation %s: status record: nullTokens: %q: %q is not the null token of a field listed in null", key, field, token)
		}
	}
	empty := make([]string, 0, len(s.Empty))
	for field, text := range s.Empty {
		if text == "" || strings.Trim(text, " \t\r\n") != "" || s.WasCreated(field) || s.WasNull(field) {
			return nil, fmt.Errorf("annotation %s: status record: empty: %q: %q is not the blank space of a field that was an empty collection", key, field, text)
		}
		empty = append(empty, field)
	}
	sort.Strings(empty)
	for _, list := range []struct {
		name   string
		fields []string
	}{{statusCreated, s.Created}, {statusNull, s.Null}, {statusEmpty, empty}} {
		for _, c := range list.fields {
			switch {
			case isRecordedField(c):
			case c == EmptySpec && list.name == statusEmpty:
			default:
				return nil, fmt.Errorf("annotation %s: status record: %s: unknown field %q", key, list.name, c)
			}
		}
	}
	return &s, nil
}

// WasCreated reports whether injection created field (Created).
func (s *Status) WasCreated(field string) bool { return slices.Contains(s.Created, field) }

// WasNull reports whether field was present but empty (Null).
func (s *Status) WasNull(field string) bool { return slices.Contains(s.Null, field) }

// NullToken returns how the empty field was written ("null", "~"), "" for
// nothing at all.
func (s *Status) NullToken(field string) string { return s.NullTokens[field] }

// EmptyText returns what was between the brackets of field when it was an
// empty collection, "" when nothing is recorded.
func (s *Status) EmptyText(field string) string { return s.Empty[field] }

// NoteEmpty records what was between the brackets of field, an empty
// collection injection adds to, when the items replace it.
func (s *Status) NoteEmpty(field, text string) {
	if text == "" {
		return
	}
	if s.Empty == nil {
		s.Empty = map[string]string{}
	}
	s.Empty[field] = text
}

// AddField records that injection created field (old is nil), or filled it
// when it was present but empty (old is its null value).
func (s *Status) AddField(field string, old *yaml.Node) {
	list := &s.Created
	if old != nil {
		list = &s.Null
		if old.Value != "" {
			if s.NullTokens == nil {
				s.NullTokens = map[string]string{}
			}
			s.NullTokens[field] = old.Value
		}
	}
	for _, c := range *list {
		if c == field {
			return
		}
	}
	*list = append(*list, field)
	sort.Strings(*list)
}
