package record

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
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
		b = appendJSONString(b, f.Name)
		return append(b, ':')
	}
	switch f.Value {
	case Int:
		return strconv.AppendInt(key(b), int64(s.Version), 10), false
	case String:
		return appendJSONString(key(b), s.Template), false
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
			b = appendJSONString(b, item)
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
			b = append(appendJSONString(b, g.Name), ':')
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
		b = append(appendJSONString(b, k), ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

const lowerHex = "0123456789abcdef"

// appendJSONString writes s as a JSON string as encoding/json does without
// HTML escaping: quote and backslash escaped, \b \f \n \r \t by name, the
// other control characters as \u00XX, U+2028 and U+2029 as \u2028 and
// \u2029, and each byte that is not UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
