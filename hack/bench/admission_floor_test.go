package main

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestInjectionPatch: the patch of the admission part's references (the
// constant policy and the zero-work webhook) turns the bench Pod into the
// Pod the core injects, for the native default and for a classic sidecar.
func TestInjectionPatch(t *testing.T) {
	classic := false
	for _, s := range []inject.Settings{{}, {Native: &classic}} {
		in, err := inject.New(inject.DefaultTemplate(), s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := injectedPod(in)
		if err != nil {
			t.Fatal(err)
		}
		adds, err := injectionPatch(want)
		if err != nil {
			t.Fatal(err)
		}
		patch, err := json.Marshal(adds)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			t.Fatal(err)
		}
		pod := benchPod("", "web")
		pod.Namespace = want.Namespace
		src, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decoded.Apply(src)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonpatch.Equal(got, wantJSON) {
			t.Errorf("native %v: the patched bench Pod is not the injected one:\n%s\n--- want:\n%s", s.Native == nil, got, wantJSON)
		}
		if bytes.Equal(got, src) {
			t.Error("the patch changed nothing")
		}
	}
}
