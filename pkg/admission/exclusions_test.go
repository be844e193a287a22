package admission_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/admission"
)

// undecodablePods are the corpus Pods (invalid-objects) the API server
// refuses before admission: they are not compared.
const undecodablePods = 2

// inProcessExclusions are the only reasons TestInProcess compares a Pod
// with anything but the core's own output, each with why
// (podgen.MarkExclusions for the policy's words in its mark).
var inProcessExclusions = map[string]string{
	"record-updated": "the Pod carries a stale record of the policy's own profile: the core updates it, the policy leaves a Pod " +
		"with its own record as created (injected at build time, or re-invoked); compared with the Pod as created",
}

func init() {
	for _, x := range podgen.MarkExclusions {
		inProcessExclusions[x.Name] = x.Why
	}
}

// markDifference compares the Pod admitted with the one wanted, whose
// skip annotation (key) holds the core's message as the core wrote it:
// equal, or equal but for the exclusions of podgen.MarkExclusions that
// turn the wanted mark into the admitted one.
func markDifference(got, want map[string]any, key string) (exclusions []string, same bool) {
	if reflect.DeepEqual(got, want) {
		return nil, true
	}
	gotMark, wantMark := annotationOf(got, key), annotationOf(want, key)
	if gotMark == "" || wantMark == "" || !reflect.DeepEqual(withMark(got, key, wantMark), want) {
		return nil, false
	}
	return podgen.MarkDifference(wantMark, gotMark)
}

// predictMarkExclusions counts, from the core's message alone, the
// exclusions the policy's mark of it will need.
func predictMarkExclusions(predicted outcomes, message string) {
	if strings.Contains(message, "already exists and differs from the template's: the pod's is ") {
		predicted["mark-volume"]++
		message = message[:strings.Index(message, "the pod's is ")] + message[strings.Index(message, "the template's is "):]
	}
	if i := strings.Index(message, ": not a valid status record: "); i >= 0 {
		predicted["mark-record"]++
		message = message[:i] + ": not a valid status record (not as kubectl-inject writes it)"
	}
	if utf8.RuneCountInString(message) > admission.MarkMessageLimit {
		predicted["mark-truncated"]++
	}
}

// checkInProcessExclusions holds the exclusions the comparisons made to
// the list and, reason by reason, to the core's prediction.
func checkInProcessExclusions(t *testing.T, got, predicted outcomes) {
	t.Helper()
	for reason, n := range got {
		if _, listed := inProcessExclusions[reason]; !listed {
			t.Errorf("%d Pods excluded for %q, which the test does not list", n, reason)
		}
	}
	for reason := range inProcessExclusions {
		if got[reason] != predicted[reason] {
			t.Errorf("excluded for %s: %d Pods, the core's report predicts %d", reason, got[reason], predicted[reason])
		}
	}
}

func annotationOf(pod map[string]any, key string) string {
	meta, _ := pod["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	v, _ := ann[key].(string)
	return v
}

// withMark is a copy of pod (through asMap's JSON form) with annotation
// key set to value.
func withMark(pod map[string]any, key, value string) map[string]any {
	out := map[string]any{}
	for k, v := range pod {
		out[k] = v
	}
	meta := map[string]any{}
	if m, ok := pod["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	ann := map[string]any{}
	if a, ok := meta["annotations"].(map[string]any); ok {
		for k, v := range a {
			ann[k] = v
		}
	}
	ann[key] = value
	meta["annotations"], out["metadata"] = ann, meta
	return out
}
