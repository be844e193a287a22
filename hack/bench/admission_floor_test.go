package main

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestInjectionPatch: the patch of the admission part's references (the
// constant policy and the zero-work webhook) turns the bench Pod into the
// Pod the core injects, for the native default and for a classic sidecar.
func TestInjectionPatch(t *testing.T) {
	classic := false
	for _, s := range []inject.Settings{{}, {Native: &classic}} {
		want := must[*corev1.Pod](t)(injectedPod(must[*inject.Injector](t)(inject.New(inject.DefaultTemplate(), s))))
		patch := must[jsonpatch.Patch](t)(jsonpatch.DecodePatch(must[[]byte](t)(injectionPatchJSON(want))))
		pod := benchPod("", "web")
		pod.Namespace = want.Namespace
		src := must[[]byte](t)(json.Marshal(pod))
		got := must[[]byte](t)(patch.Apply(src))
		wantJSON := must[[]byte](t)(json.Marshal(want))
		if !jsonpatch.Equal(got, wantJSON) {
			t.Errorf("native %v: the patched bench Pod is not the injected one:\n%s\n--- want:\n%s", s.Native == nil, got, wantJSON)
		}
		if bytes.Equal(got, src) {
			t.Error("the patch changed nothing")
		}
	}
}

// must returns a function that gives back a value, failing t on its error.
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
