package inject_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestStatusGrammar holds the Status type to the declared grammar of the
// record: a JSON tag, a field's type or its order changed in the struct
// alone fails here, not silently in the admission policy's pattern.
func TestStatusGrammar(t *testing.T) {
	t.Parallel()
	checkGrammar(t, "status", reflect.TypeOf(inject.Status{}), inject.StatusGrammar())
}

func checkGrammar(t *testing.T, where string, typ reflect.Type, grammar []inject.RecordField) {
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
		want := map[inject.RecordValue]reflect.Kind{
			inject.RecordInt: reflect.Int, inject.RecordString: reflect.String, inject.RecordList: reflect.Slice,
			inject.RecordMap: reflect.Map, inject.RecordObject: reflect.Struct,
		}[g.Value]
		if ft.Kind() != want {
			t.Errorf("%s.%s: a %s, the grammar says %s", where, name, ft.Kind(), want)
			continue
		}
		if g.Value == inject.RecordObject {
			checkGrammar(t, where+"."+name, ft, g.Fields)
		}
	}
}
