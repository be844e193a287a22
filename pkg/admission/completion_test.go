package admission_test

import (
	"testing"

	kadmission "github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// TestClassicSidecarLeftOutOfCompletingPods: a policy compiled from a
// classic template leaves a Pod that runs to completion as created, marks
// it with the core's reason and message (written out here), and the
// validating policy warns with that message; the same Pod that restarts
// always is injected, and the native default's policy injects both.
func TestClassicSidecarLeftOutOfCompletingPods(t *testing.T) {
	t.Parallel()
	const message = `spec.restartPolicy: "OnFailure": the pod runs to completion, and classic sidecar "envoy" would keep it running after the app exits (inject a native sidecar: --native, or native: true)`
	pod := func(restartPolicy string) []byte {
		return []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  restartPolicy: " + restartPolicy + "\n  containers: [{name: app, image: a}]\n")
	}
	classic, native := false, true
	cases := []struct {
		name          string
		native        *bool
		restartPolicy string
		mark          string // "" when injected
	}{
		{"classic, runs to completion", &classic, "OnFailure", "runs_to_completion: " + message},
		{"classic, runs until stopped", &classic, "Always", ""},
		{"native, runs to completion", &native, "OnFailure", ""},
		{"the default, runs to completion", nil, "Never", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Native: c.native})
			if err != nil {
				t.Fatal(err)
			}
			p, err := kadmission.Compile(in, "")
			if err != nil {
				t.Fatal(err)
			}
			sp, err := loadServerPolicy(p)
			if err != nil {
				t.Fatal(err)
			}
			created, err := decodePod(pod(c.restartPolicy))
			if err != nil {
				t.Fatal(err)
			}
			got, err := sp.admit(created, nil)
			if err != nil {
				t.Fatal(err)
			}
			ann := got.pod.Annotations
			if c.mark == "" {
				if _, ok := ann[naming.StatusAnnotation]; !ok || got.mutationError != nil {
					t.Fatalf("not injected (error %v): %v", got.mutationError, ann)
				}
				if len(got.warnings) != 0 {
					t.Errorf("warnings %q", got.warnings)
				}
				return
			}
			if ann[naming.SkippedAnnotationFor("")] != c.mark || len(got.pod.Spec.Containers) != 1 || len(got.pod.Spec.InitContainers) != 0 {
				t.Errorf("mark %q, %d containers, %d init containers\nwant mark %q and the Pod as created", ann[naming.SkippedAnnotationFor("")], len(got.pod.Spec.Containers), len(got.pod.Spec.InitContainers), c.mark)
			}
			want := "sidecar not injected by " + p.Name + ": " + message
			if len(got.warnings) != 1 || got.warnings[0] != want {
				t.Errorf("warnings %q, want [%q]", got.warnings, want)
			}
		})
	}
}
