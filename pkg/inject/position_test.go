package inject_test

import (
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// A refused field is reported where it lies in the document: its line
// and column (and the document's in a stream, from its first line).
func TestRefusalPosition(t *testing.T) {
	t.Parallel()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	src := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: busybox\n  volumes: 7\n"
	_, report := in.ProcessText(inject.OpInject, []byte(src), 0)
	if len(report) != 1 || report[0].Action != inject.Failed || report[0].Line != 8 || report[0].Column != 12 {
		t.Errorf("%+v, want a failure at line 8, column 12", report)
	}
}
