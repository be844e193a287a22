package admission

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

func TestTwoProfiles(t *testing.T) {
	c.Require(t)
	ensureNamespace(t, "ns-a")
	ensureNamespace(t, "ns-b")
	// The default made classic: two classic sidecars share the containers
	// list, where the order the API server runs the policies in shows.
	classicDefault := defaultConfig + "  native: false\n"
	first, second := injectorFor(t, classicDefault), injectorFor(t, logsConfig)
	g, err := podgen.For(classicDefault)
	if err != nil {
		t.Fatal(err)
	}
	withSecond, err := podgen.For(logsConfig)
	if err != nil {
		t.Fatal(err)
	}
	g.Params = append(g.Params, withSecond.Params...)
	g.Sidecar, g.Volume = withSecond.Sidecar, withSecond.Volume
	const pods = 80
	manifests := g.Pods(7, pods, "two")
	// The core injects the Pods as the API server decodes them (before any
	// policy is installed): what the policies see.
	decoded := make([][]byte, len(manifests))
	for i, m := range manifests {
		decoded[i] = m
		if pod, err := createPod(t, m, true); err == nil {
			if decoded[i], err = json.Marshal(pod); err != nil {
				t.Fatal(err)
			}
		}
	}

	firstFile, secondFile := writeFile(t, "default.yaml", []byte(classicDefault)), writeFile(t, "logs.yaml", []byte(logsConfig))
	probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: default}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	applyPolicy(t, firstFile, probe)
	applyPolicy(t, secondFile, probe)
	order := func() []*inject.Injector {
		// Both policies run once the probe has both records; the order of
		// the sidecars tells which ran first.
		for {
			got, err := createPod(t, probe, true)
			if err != nil {
				t.Fatal(err)
			}
			_, a := annotation(got, first.StatusAnnotation())
			_, b := annotation(got, second.StatusAnnotation())
			if !a || !b {
				continue
			}
			// Both sidecars are containers here (the default made
			// classic), so their order tells which policy ran first.
			names := strings.Join(containerNames(&unstructured.Unstructured{Object: got}), ",")
			switch names {
			case "app,envoy,log-agent":
				return []*inject.Injector{first, second}
			case "app,log-agent,envoy":
				return []*inject.Injector{second, first}
			}
			t.Fatalf("probe: containers %s", names)
		}
	}
	ran := order()
	t.Logf("the API server runs %s's policy, then %s's", profileOf(ran[0]), profileOf(ran[1]))
	admitted := make([]map[string]any, len(manifests))
	errs := make([]error, len(manifests))
	for i, m := range manifests {
		admitted[i], errs[i] = createPod(t, m, false)
	}
	if again := order(); again[0] != ran[0] {
		t.Fatal("the order of the policies changed while the Pods were created")
	}
	deletePolicy(t, secondFile, probe)
	deletePolicy(t, firstFile, probe)
	// compared counts the Pods stored alike both ways; both the Pods the
	// policies gave both sidecars, wantBoth the ones the core's output
	// has both records in.
	compared, both, wantBoth := 0, 0, 0
	for i, m := range manifests {
		deletePod(t, m)
		out := decoded[i]
		for _, in := range ran {
			var e inject.Entry
			_, had := podFrom(t, out).GetAnnotations()[in.StatusAnnotation()]
			if out, e = coreInject(t, in, out); podgen.SkipCode(e) != "" && selected(e) && !had {
				out = marked(t, out, naming.SkippedAnnotationFor(in.Profile()), podgen.SkipMark(podgen.SkipCode(e), e))
			}
		}
		want, wantErr := createPod(t, out, false)
		deletePod(t, out)
		name := podFrom(t, m).GetName()
		if wantErr == nil && hasRecords(podFrom(t, out).Object, first, second) {
			wantBoth++
		}
		if errs[i] == nil && hasRecords(admitted[i], first, second) {
			both++
		}
		switch {
		case errs[i] != nil || wantErr != nil:
			if errs[i] == nil || wantErr == nil || errs[i].Error() != wantErr.Error() {
				t.Errorf("pod %s: created with the policies: %v; created from the core's output: %v\n%s", name, errs[i], wantErr, m)
			} else {
				compared++
			}
		case !reflect.DeepEqual(admitted[i], want):
			t.Errorf("pod %s: the stored Pods differ\n--- manifest:\n%s--- with the policies:\n%s\n--- from the core (%s, then %s):\n%s",
				name, m, toJSON(admitted[i]), profileOf(ran[0]), profileOf(ran[1]), toJSON(want))
		default:
			compared++
		}
	}
	t.Logf("%d Pods compared, %d with both profiles' sidecars", compared, both)
	if compared != pods || both != wantBoth {
		t.Errorf("%d Pods compared, %d with both sidecars; want %d, %d with both as the core injects them", compared, both, pods, wantBoth)
	}
	if wantBoth == 0 {
		t.Error("the core gives no Pod both profiles' sidecars: the test compares nothing of interest")
	}
}

// hasRecords reports whether pod holds the status record of every
// injector.
func hasRecords(pod map[string]any, injectors ...*inject.Injector) bool {
	for _, in := range injectors {
		if _, ok := annotation(pod, in.StatusAnnotation()); !ok {
			return false
		}
	}
	return true
}

func profileOf(in *inject.Injector) string {
	if in.Profile() == "" {
		return "the default profile"
	}
	return "profile " + in.Profile()
}

// countFeatures counts what a Pod of a suite exercises: another profile's
// record on the manifest, and override values in the record the Pod got.
func countFeatures(counts map[string]int, manifest []byte, stored map[string]any, in *inject.Injector) {
	u := unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(manifest, &u.Object); err != nil {
		return
	}
	for key := range u.GetAnnotations() {
		if _, ok := naming.ProfileOfStatusKey(key); ok && key != in.StatusAnnotation() {
			counts["+other-record"]++
			break
		}
	}
	if record, ok := annotation(stored, in.StatusAnnotation()); ok && strings.Contains(record, `"values":`) {
		counts["+values"]++
	}
}
