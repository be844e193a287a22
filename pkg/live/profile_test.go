package live

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

const logAgentTemplate = `containers:
- name: log-agent
  image: fluent/fluent-bit:3.0
volumes:
- name: logs
  emptyDir: {}
`

// profilePatcher returns a patcher for op with the default template
// (profile "") or the log agent (any other profile).
func profilePatcher(t *testing.T, op inject.Op, s inject.Settings) *Patcher {
	t.Helper()
	tmpl := inject.DefaultTemplate()
	if s.Profile != "" {
		cfg, err := inject.ParseConfig([]byte(logAgentTemplate), nil)
		if err != nil {
			t.Fatal(err)
		}
		tmpl = cfg.Template
	}
	in, err := inject.New(tmpl, s)
	if err != nil {
		t.Fatal(err)
	}
	return &Patcher{Injector: in, Op: op}
}

// step runs p on obj and returns the change and the object after it.
func step(t *testing.T, p *Patcher, obj *unstructured.Unstructured, want inject.Action) (*change, *unstructured.Unstructured) {
	t.Helper()
	ch, err := p.compute(obj)
	if err != nil || ch.entry.Action != want {
		t.Fatalf("compute: %v %+v, want %s", err, ch.entry, want)
	}
	out, err := ch.object()
	if err != nil {
		t.Fatal(err)
	}
	return ch, out
}

// appliedNames lists the containers and volumes an apply configuration
// owns, and its annotation keys.
func appliedNames(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, field := range []string{"initContainers", "containers", "volumes"} {
		list, _, _ := unstructured.NestedSlice(m, "spec", "template", "spec", field)
		for _, item := range list {
			names = append(names, field+":"+item.(map[string]any)["name"].(string))
		}
	}
	annotations, _, _ := unstructured.NestedStringMap(m, "spec", "template", "metadata", "annotations")
	for k := range annotations {
		names = append(names, "annotation:"+k)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// TestApplyBodyProfiles: one field manager applies for every profile, so
// each apply configuration holds every profile still injected; one that
// held only its own profile would make the server remove the other's
// sidecar. Uninjecting one profile keeps the other's fields; uninjecting
// all leaves the identity alone.
func TestApplyBodyProfiles(t *testing.T) {
	t.Parallel()
	obj := object(t, deploymentYAML)
	_, withDefault := step(t, profilePatcher(t, inject.OpInject, inject.Settings{}), obj, inject.Injected)
	logs := profilePatcher(t, inject.OpInject, inject.Settings{Profile: "logs"})
	ch, both := step(t, logs, withDefault, inject.Injected)

	const defaultParts = "annotation:sidecar.kinject.dev/status initContainers:envoy"
	cases := []struct {
		name string
		op   inject.Op
		s    inject.Settings
		from *unstructured.Unstructured
		want string
	}{
		{"inject a second profile", inject.OpInject, inject.Settings{Profile: "logs"}, withDefault,
			defaultParts + " annotation:kubectl.kubernetes.io/default-container annotation:logs.sidecar.kinject.dev/status containers:log-agent volumes:logs"},
		{"uninject one profile", inject.OpUninject, inject.Settings{Profile: "logs"}, both,
			defaultParts},
		{"uninject the default profile", inject.OpUninject, inject.Settings{}, both,
			"annotation:kubectl.kubernetes.io/default-container annotation:logs.sidecar.kinject.dev/status containers:log-agent volumes:logs"},
		{"uninject all profiles", inject.OpUninjectAll, inject.Settings{}, both, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := ch
			if tc.op.Uninjects() {
				c, _ = step(t, profilePatcher(t, tc.op, tc.s), tc.from, inject.Uninjected)
			}
			body, err := applyBody(tc.from, c, tc.op)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(tc.want)
			sort.Strings(want)
			if got := appliedNames(t, body); got != strings.Join(want, " ") {
				t.Errorf("apply configuration owns\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestStillInjected: after a server-side uninject, the fallback patch runs
// only when the profile asked for (or, with AllProfiles, any profile) is
// still there; another profile's record is no reason to patch.
func TestStillInjected(t *testing.T) {
	t.Parallel()
	_, withDefault := step(t, profilePatcher(t, inject.OpInject, inject.Settings{}), object(t, deploymentYAML), inject.Injected)
	cases := []struct {
		name string
		op   inject.Op
		s    inject.Settings
		want bool
	}{
		{"the profile that is there", inject.OpUninject, inject.Settings{}, true},
		{"another profile", inject.OpUninject, inject.Settings{Profile: "logs"}, false},
		{"all profiles", inject.OpUninjectAll, inject.Settings{Profile: "logs"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := stillInjected(tc.op, profilePatcher(t, tc.op, tc.s).Injector, withDefault); got != tc.want {
				t.Errorf("stillInjected = %v, want %v", got, tc.want)
			}
		})
	}
	if stillInjected(inject.OpUninjectAll, profilePatcher(t, inject.OpUninjectAll, inject.Settings{}).Injector, object(t, deploymentYAML)) {
		t.Error("an object without records is still injected")
	}
}
