package record_test

import (
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
