package rollout

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

// annotated is a template of one native sidecar of image whose Pods get
// the annotation example.com/proxy-config=config (with a cpu limit, as
// injectedPod wants one).
func annotated(t *testing.T, image, config string) *inject.Injector {
	t.Helper()
	tmpl, err := inject.ParseTemplate([]byte(`metadata:
  annotations:
    example.com/proxy-config: "` + config + `"
initContainers:
- name: proxy
  image: ` + image + `
  restartPolicy: Always
  resources: {limits: {cpu: 1000m}}
`))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tmpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestDecideUpgradeAnnotations: an annotation of the Pod the template
// changes, other than the record, is a change a running Pod's sidecar
// does not take by its image: the Pod is recreated, the annotation named;
// the record and the in-place marker alone do not count.
func TestDecideUpgradeAnnotations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		was, now   *inject.Injector
		marker     bool // the Pod was upgraded in place before
		wantReason reason.Code
		wantMsg    string
	}{
		{"the template's annotation changes", annotated(t, "proxy:a", "v1"), annotated(t, "proxy:b", "v2"), false,
			ReasonNotImageOnly, "metadata.annotations.example.com/proxy-config changes"},
		{"the image alone", annotated(t, "proxy:a", "v1"), annotated(t, "proxy:b", "v1"), false, "", ""},
		{"the image alone, upgraded in place before", annotated(t, "proxy:a", "v1"), annotated(t, "proxy:b", "v1"), true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := injectedPod(t, tc.was, func(obj map[string]any) {
				if tc.marker {
					obj["metadata"].(map[string]any)["annotations"].(map[string]any)[UpgradedInPlaceAnnotation("")] = "h0"
				}
			})
			u := DecideUpgrade(tc.now, pod)
			if u.Reason != tc.wantReason || !strings.HasPrefix(u.Message, tc.wantMsg) {
				t.Fatalf("reason %q (%s), want %q (%s)", u.Reason, u.Message, tc.wantReason, tc.wantMsg)
			}
			if tc.wantReason == "" && (len(u.Images) != 1 || u.Images[0] != (ImageChange{Container: "proxy", Init: true, From: "proxy:a", To: "proxy:b"})) {
				t.Errorf("images %+v, want proxy's alone", u.Images)
			}
		})
	}
}

// TestDecideUpgradeImageAloneResizesNothing: a Pod whose sidecar differs
// by its image alone is not resized, though the API server wrote its cpu
// limit in canonical form ("1" for the template's 1000m), and though its
// node could not resize it (a kubelet that does not report resources, a
// Windows Pod): nothing of its resources changes.
func TestDecideUpgradeImageAloneResizesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
	}{
		{"canonical quantities", nil},
		{"a node that does not report resources", func(obj map[string]any) {
			obj["status"] = map[string]any{"containerStatuses": []any{map[string]any{"name": "app", "state": map[string]any{"running": map[string]any{}}}}}
		}},
		{"a Windows Pod", func(obj map[string]any) {
			obj["spec"].(map[string]any)["os"] = map[string]any{"name": "windows"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := injectedPod(t, injector(t, "envoy:a", true), tc.edit)
			// the template writes 1000m
			if c := pod.Object["spec"].(map[string]any)["initContainers"].([]any)[0].(map[string]any); c["resources"].(map[string]any)["limits"].(map[string]any)["cpu"] != "1" {
				t.Fatalf("the Pod's resources are %v, want the cpu limit in canonical form, 1", c["resources"])
			}
			u := DecideUpgrade(injector(t, "envoy:b", true), pod)
			if !u.InPlace() {
				t.Fatalf("%s: %s", u.Reason, u.Message)
			}
			if len(u.Resources) != 0 {
				t.Errorf("resources %+v, want none", u.Resources)
			}
			if patch, err := u.ResizePatch(); patch != nil || err != nil {
				t.Errorf("resize %s, %v; want none", patch, err)
			}
		})
	}
}

// TestSameQuantities compares resource lists by value, and a value that
// is no quantity by its text.
func TestSameQuantities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b, a map[string]any
		want bool
	}{
		{"canonical form", map[string]any{"cpu": "1"}, map[string]any{"cpu": "1000m"}, true},
		{"canonical form, the other way", map[string]any{"cpu": "1000m"}, map[string]any{"cpu": "1"}, true},
		{"a YAML number", map[string]any{"cpu": "2"}, map[string]any{"cpu": float64(2)}, true},
		{"memory units", map[string]any{"memory": "1Gi"}, map[string]any{"memory": "1024Mi"}, true},
		{"another value", map[string]any{"cpu": "1"}, map[string]any{"cpu": "2"}, false},
		{"not quantities, equal", map[string]any{"cpu": "lots"}, map[string]any{"cpu": "lots"}, true},
		{"not quantities, different", map[string]any{"cpu": "lots"}, map[string]any{"cpu": "more"}, false},
		{"a quantity and not one", map[string]any{"cpu": "1"}, map[string]any{"cpu": "one"}, false},
		{"not one and a quantity", map[string]any{"cpu": "one"}, map[string]any{"cpu": "1"}, false},
		{"one more name", map[string]any{"cpu": "1"}, map[string]any{"cpu": "1", "memory": "1Gi"}, false},
	} {
		if got := sameQuantities(tc.b, tc.a); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCanonicalResources writes every quantity as text, as a resize takes
// it, and adds no list the container lacks.
func TestCanonicalResources(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		in, want map[string]any
	}{
		{"numbers as text", map[string]any{"limits": map[string]any{"cpu": float64(2), "memory": "512Mi"}, "requests": map[string]any{"cpu": int64(1)}},
			map[string]any{"limits": map[string]any{"cpu": "2", "memory": "512Mi"}, "requests": map[string]any{"cpu": "1"}}},
		{"limits alone", map[string]any{"limits": map[string]any{"cpu": float64(0.5)}},
			map[string]any{"limits": map[string]any{"cpu": "0.5"}}},
		{"other fields kept", map[string]any{"claims": []any{map[string]any{"name": "gpu"}}},
			map[string]any{"claims": []any{map[string]any{"name": "gpu"}}}},
		{"a value that is no quantity kept", map[string]any{"requests": map[string]any{"cpu": true}},
			map[string]any{"requests": map[string]any{"cpu": true}}},
	} {
		if got := canonicalResources(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestResizePatchSetsListsGiven: the resize sets the lists the sidecar's
// resources hold and never sends an empty or null one, which would remove
// the container's requests or limits.
func TestResizePatchSetsListsGiven(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		to   map[string]any
		want string
	}{
		{"limits alone", map[string]any{"limits": map[string]any{"cpu": "2"}},
			`{"spec":{"containers":[{"name":"envoy","resources":{"limits":{"cpu":"2"}}}]}}`},
		{"empty requests", map[string]any{"limits": map[string]any{"cpu": "2"}, "requests": map[string]any{}},
			`{"spec":{"containers":[{"name":"envoy","resources":{"limits":{"cpu":"2"}}}]}}`},
		{"requests alone", map[string]any{"requests": map[string]any{"memory": "64Mi"}},
			`{"spec":{"containers":[{"name":"envoy","resources":{"requests":{"memory":"64Mi"}}}]}}`},
	} {
		u := Upgrade{Pod: "web-0", Resources: []ResourceChange{{Container: "envoy", To: tc.to}}}
		got, err := u.ResizePatch()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestRunsResources: a container runs the resources of a resize once its
// status shows them; a status that shows none (a kubelet that does not
// report them) does not.
func TestRunsResources(t *testing.T) {
	t.Parallel()
	want := map[string]any{"requests": map[string]any{"cpu": "100m"}, "limits": map[string]any{"cpu": "1"}}
	for _, tc := range []struct {
		name   string
		status map[string]any
		runs   bool
	}{
		{"shown", map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "0.1"}, "limits": map[string]any{"cpu": "1000m"}}}, true},
		{"other limits", map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}, "limits": map[string]any{"cpu": "2"}}}, false},
		{"none shown", map[string]any{"name": "envoy"}, false},
	} {
		if got := RunsResources(tc.status, want); got != tc.runs {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.runs)
		}
	}
}

// fromTemplate is an injector of the template text, whose sidecar is a
// native proxy (cpu limit as annotated's, which injectedPod wants).
func fromTemplate(t *testing.T, text string) *inject.Injector {
	t.Helper()
	tmpl, err := inject.ParseTemplate([]byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	in, err := inject.New(tmpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestDecideUpgradeNamesTheField: a template that changes more than the
// sidecars' images and resources has the Pod recreated, and the message
// names the first field a running Pod cannot take: a label, a volume, a
// sidecar more or renamed, an argument; an image alone is in place.
func TestDecideUpgradeNamesTheField(t *testing.T) {
	t.Parallel()
	const proxy = "- name: proxy\n  image: proxy:IMAGE\n  restartPolicy: Always\n  resources: {limits: {cpu: 1000m}}\n"
	base := "initContainers:\n" + strings.ReplaceAll(proxy, "IMAGE", "a")
	next := "initContainers:\n" + strings.ReplaceAll(proxy, "IMAGE", "b")
	for _, tc := range []struct {
		name, now, want string
	}{
		{"a label", "metadata:\n  labels: {mesh: \"on\"}\n" + next, "metadata.labels changes"},
		{"a volume", next + "volumes:\n- name: v\n  emptyDir: {}\n", "spec.volumes changes"},
		{"a sidecar more", next + strings.ReplaceAll(strings.ReplaceAll(proxy, "IMAGE", "b"), "name: proxy", "name: agent"), "spec.initContainers changes"},
		{"a sidecar renamed", strings.ReplaceAll(next, "name: proxy", "name: agent"), "spec.initContainers changes"},
		{"an argument", next + "  args: [--verbose]\n", "spec.initContainers[proxy].args changes"},
		{"the image alone", next, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := DecideUpgrade(fromTemplate(t, tc.now), injectedPod(t, fromTemplate(t, base), nil))
			if tc.want == "" {
				if !u.InPlace() {
					t.Fatalf("%s: %s, want in place", u.Reason, u.Message)
				}
				return
			}
			if u.Reason != ReasonNotImageOnly || !strings.HasPrefix(u.Message, tc.want) {
				t.Errorf("%s: %s\nwant %s: %s", u.Reason, u.Message, ReasonNotImageOnly, tc.want)
			}
		})
	}
}
