package inject_test

import (
	"bytes"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// An empty pod spec laid out across lines comes back as it was on
// uninject, whatever the template adds: the default, native (init
// containers, no containers) or classic, and a sidecar with more volumes
// than containers.
func TestEmptySpecAcrossLinesRoundTrip(t *testing.T) {
	t.Parallel()
	input := []byte(`{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "empty"
  },
  "spec": {
    "template": {
      "spec": {
      }
    }
  }
}
`)
	volumes, err := inject.ParseTemplate([]byte("containers:\n- {name: agent, image: agent:1}\nvolumes:\n- {name: a, emptyDir: {}}\n- {name: b, emptyDir: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, tmpl := range map[string]*template.Template{
		"native":             inject.DefaultTemplate().WithNative(true),
		"classic":            inject.DefaultTemplate().WithNative(false),
		"two volumes to one": volumes,
	} {
		in, err := inject.New(tmpl, inject.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		injected, report := in.ProcessText(inject.OpInject, input, 0)
		if len(report) != 1 || report[0].Action != inject.Injected {
			t.Fatalf("%s: %v", name, report)
		}
		if back, report := in.ProcessText(inject.OpUninject, injected, 0); !bytes.Equal(back, input) {
			t.Errorf("%s: uninject gave (%v)\n%s", name, report, back)
		}
	}
}
