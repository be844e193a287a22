package inject_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestClassicDefaultBroughtOver: a workload injected by the previous,
// classic default is not current for the native default; injecting again
// replaces the classic sidecar with the native one (nothing else
// changes), and uninjecting either gives the original bytes back.
func TestClassicDefaultBroughtOver(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("earlier_defaults/302072cdf16e41026c81.yaml")
	if err != nil {
		t.Fatal(err)
	}
	classicTpl, err := inject.ParseTemplate(data)
	if err != nil {
		t.Fatal(err)
	}
	classic, err := inject.New(classicTpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	native, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	const app = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the shop\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        ports: [{containerPort: 8080}]\n"
	old, entries := classic.ProcessText(inject.OpInject, []byte(app), 0)
	if entries[0].Action != inject.Injected || !strings.Contains(string(old), `"containers":["envoy"]`) {
		t.Fatalf("the classic default: %s %s\n%s", entries[0].Action, entries[0].Message, old)
	}
	if _, entries = native.ProcessText(inject.OpInject, old, 0); entries[0].Action != inject.Updated {
		t.Fatalf("a workload of the classic default: %s, want updated", entries[0].Action)
	}
	upgraded, _ := native.ProcessText(inject.OpInject, old, 0)
	fresh, _ := native.ProcessText(inject.OpInject, []byte(app), 0)
	if string(upgraded) != string(fresh) {
		t.Errorf("the upgrade differs from a fresh injection:\n%s\nwant:\n%s", upgraded, fresh)
	}
	for name, in := range map[string][]byte{"classic": old, "native": upgraded} {
		back, entries := native.ProcessText(inject.OpUninject, in, 0)
		if entries[0].Action != inject.Uninjected || string(back) != app {
			t.Errorf("uninject of the %s injection: %s\n%s", name, entries[0].Action, back)
		}
	}
}
