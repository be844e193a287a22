package record

import (
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/jsonstr"
)

// Encode renders the status as compact JSON, field by field as Grammar
// declares them, in its order: what encoding/json writes for Status
// (without HTML escaping; TestEncodeIsJSON holds them equal), without the
// reflection encoding/json does on its first use, which cost a short run
// (one inject-fn call) half a millisecond.
func (s *Status) Encode() string {
	b := make([]byte, 0, 512)
	b = append(b, '{')
	first := true
	for _, f := range encodeGrammar() {
		b, first = s.appendField(b, f, first)
	}
	return string(append(b, '}'))
}

// encodeGrammar is Grammar, built once for every Encode.
var encodeGrammar = sync.OnceValue(Grammar)

// appendField writes the field f of s, unless it is optional and empty;
// first reports whether no field was written before.
func (s *Status) appendField(b []byte, f Field, first bool) ([]byte, bool) {
	key := func(b []byte) []byte {
		if !first {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, f.Name)
		return append(b, ':')
	}
	switch f.Value {
	case Int:
		return strconv.AppendInt(key(b), int64(s.Version), 10), false
	case String:
		return jsonstr.Append(key(b), s.Template), false
	case List:
		list := s.List(f.Name)
		if f.Optional && len(list) == 0 {
			return b, first
		}
		b = append(key(b), '[')
		for i, item := range list {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, item)
		}
		return append(b, ']'), false
	case Map:
		m := s.mapField(f.Name)
		if f.Optional && len(m) == 0 {
			return b, first
		}
		return appendJSONMap(key(b), m), false
	case Object: // changed: written when set, even with both maps empty
		if s.Changed == nil {
			return b, first
		}
		b = append(key(b), '{')
		inner := true
		for _, g := range f.Fields {
			m := s.ChangedOf(g.Name)
			if len(m) == 0 {
				continue
			}
			if !inner {
				b = append(b, ',')
			}
			b = append(jsonstr.Append(b, g.Name), ':')
			b = appendJSONMap(b, m)
			inner = false
		}
		return append(b, '}'), false
	}
	return b, first
}

// mapField is the record's top-level map field named field.
func (s *Status) mapField(field string) map[string]string {
	switch field {
	case statusNullTokens:
		return s.NullTokens
	case statusEmpty:
		return s.Empty
	case statusValues:
		return s.Values
	}
	return nil
}

// appendJSONMap writes m as a JSON object, its keys sorted as encoding/json
// sorts them (by bytes).
func appendJSONMap(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonstr.Append(b, k), ':')
		b = jsonstr.Append(b, m[k])
	}
	return append(b, '}')
}
