package record_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/record"
)

// TestStatusGrammar holds the Status type to the declared grammar of the
// record: a JSON tag, a field's type or its order changed in the struct
// alone fails here, not silently in the admission policy's pattern.
func TestStatusGrammar(t *testing.T) {
	t.Parallel()
	checkGrammar(t, "status", reflect.TypeOf(record.Status{}), record.Grammar())
}

func checkGrammar(t *testing.T, where string, typ reflect.Type, grammar []record.Field) {
	t.Helper()
	var fields []reflect.StructField
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
			fields = append(fields, f)
		}
	}
	if len(fields) != len(grammar) {
		t.Fatalf("%s: %d fields in %s, %d in the grammar", where, len(fields), typ, len(grammar))
	}
	for i, f := range fields {
		g := grammar[i]
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != g.Name {
			t.Errorf("%s: field %d is %q in %s, %q in the grammar", where, i, name, typ, g.Name)
		}
		if optional := strings.Contains(opts, "omitempty"); optional != g.Optional {
			t.Errorf("%s.%s: omitempty is %v, the grammar's Optional %v", where, name, optional, g.Optional)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		want := map[record.Value]reflect.Kind{
			record.Int: reflect.Int, record.String: reflect.String, record.List: reflect.Slice,
			record.Map: reflect.Map, record.Object: reflect.Struct,
		}[g.Value]
		if ft.Kind() != want {
			t.Errorf("%s.%s: a %s, the grammar says %s", where, name, ft.Kind(), want)
			continue
		}
		if g.Value == record.Object {
			checkGrammar(t, where+"."+name, ft, g.Fields)
		}
	}
}

// jsonEncoding is what encoding/json writes for s without HTML escaping:
// what Encode must write.
func jsonEncoding(t testing.TB, s *record.Status) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// TestEncodeIsJSON: Encode writes, byte for byte, what encoding/json
// writes, for every field set or left out and strings that need escaping.
func TestEncodeIsJSON(t *testing.T) {
	t.Parallel()
	odd := "a\"b\\c\b\f\n\r\t\x00\x1f\x7f<>&é\u2028\u2029\xff\xc3 日本"
	for _, s := range []*record.Status{
		{},
		{Version: 1, Template: "abc"},
		{Version: 1, Template: odd, Containers: []string{"envoy", odd}, InitContainers: []string{"init"}, Volumes: []string{"v"},
			Labels: []string{"l"}, Annotations: []string{"a", "b"}, Created: []string{"volumes"}, Null: []string{"containers"},
			NullTokens: map[string]string{"volumes": "~", "containers": "null"}, Empty: map[string]string{"spec": "\n  ", "volumes": " "},
			Values: map[string]string{"port": "80", odd: odd, "B": "", "a": "x"}},
		{Version: 1, Template: "t", Changed: &record.Changed{}},
		{Version: 1, Template: "t", Changed: &record.Changed{Annotations: map[string]string{"z": "1", "a": odd}}},
		{Version: 1, Template: "t", Changed: &record.Changed{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"k": ""}}},
		{Version: 1, Template: "t", Containers: []string{}, Values: map[string]string{}},
	} {
		if got, want := s.Encode(), jsonEncoding(t, s); got != want {
			t.Errorf("Encode:\n%s\nencoding/json:\n%s", got, want)
		}
	}
}

// FuzzEncodeIsJSON: for any strings, Encode writes what encoding/json
// writes.
func FuzzEncodeIsJSON(f *testing.F) {
	f.Add("abc", "envoy", "app", "web", "\xff\u2028")
	f.Add("", "\x00", "\"", "\\", "é")
	f.Fuzz(func(t *testing.T, template, item, key, value, other string) {
		s := &record.Status{Version: 1, Template: template, Containers: []string{item, other}, Annotations: []string{key},
			Changed: &record.Changed{Labels: map[string]string{key: value, other: item}}, Values: map[string]string{value: key}}
		if got, want := s.Encode(), jsonEncoding(t, s); got != want {
			t.Errorf("Encode:\n%s\nencoding/json:\n%s", got, want)
		}
	})
}
