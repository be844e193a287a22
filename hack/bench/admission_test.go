package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadPolicyFile: a policy file (the example, as -admission-baseline
// takes one) reads as its four objects in order; a file without one is an
// error naming it.
func TestReadPolicyFile(t *testing.T) {
	objs, err := readPolicyFile("../../examples/admission/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		var m struct{ Kind string }
		if err := json.Unmarshal(o, &m); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, m.Kind)
	}
	want := []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, []byte("---\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPolicyFile(empty); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("a file without objects: %v", err)
	}
}
