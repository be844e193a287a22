package inject

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// TestDuplicateKeys: a key given twice anywhere in an object is refused,
// naming its field path and line; small and large mappings alike.
func TestDuplicateKeys(t *testing.T) {
	var data strings.Builder
	for i := range 40 { // a large mapping: looked up through a map
		fmt.Fprintf(&data, "  k%d: v\n", i)
	}
	data.WriteString("  k7: again\n")
	cases := []struct{ doc, want string }{
		{"kind: Deployment\nkind: Service\n", "kind: duplicate key (line 2)"},
		{"kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n        image: y\n",
			"spec.template.spec.containers[0].image: duplicate key (line 8)"},
		{"kind: Deployment\nspec:\n  list:\n  - - a: 1\n      a: 2\n", "spec.list[0][0].a: duplicate key (line 5)"},
		{"kind: ConfigMap\ndata:\n" + data.String(), "data.k7: duplicate key (line 43)"},
		{"kind: Deployment\nspec:\n  a: 1\n  b:\n    a: 2\n", ""},
	}
	for _, tc := range cases {
		node, err := yamltext.Decode([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := checkDuplicateKeys(nodes.ResolveDocument(node), ""); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.doc, got, tc.want)
		}
	}
}
