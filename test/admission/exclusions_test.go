package admission

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// exclusions are the only reasons TestDifferential compares a Pod with
// anything but the core's own output, each with why (podgen.MarkExclusions
// for the policy's words in its mark). A Pod that differs from the core's
// output for a reason not listed fails the test, and each reason's count
// is held to the count the core's report predicts.
var exclusions = map[string]string{
	"record-updated": "the Pod carries a stale record of the policy's own profile: the core updates it, the policy leaves a Pod " +
		"with its own record as created (injected at build time, or re-invoked); compared with the manifest as created",
	"uncompiled-config": "a corpus config that compiles to no policy (podgen.UncompiledConfigs, with the compiler's reason): " +
		"its case's Pods are created under no policy (the default suite's corpus leaves out the cases with a config of their own)",
}

func init() {
	for _, x := range podgen.MarkExclusions {
		exclusions[x.Name] = x.Why
	}
}

// predictExclusions counts, from the core's report on a suite's Pods and
// before any Pod is created under the policy, the exclusions each will
// need: a stale record the core updates, a marked Pod whose message names
// the Pod's volume, another profile's unreadable record, or is longer than
// the policy's mark keeps.
func predictExclusions(t *testing.T, runs []podRun, statusKey string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range runs {
		_, hadStatus := podFrom(t, r.decoded).GetAnnotations()[statusKey]
		switch {
		case hadStatus && r.entry.Action == inject.Updated:
			out["record-updated"]++
		case hadStatus || podgen.SkipCode(r.entry) == "" || !selected(r.entry) || r.entry.Action != inject.Failed:
		default:
			msg := r.entry.Message
			if strings.Contains(msg, "already exists and differs from the template's: the pod's is ") {
				out["mark-volume"]++
				msg = msg[:strings.Index(msg, "the pod's is ")] + msg[strings.Index(msg, "the template's is "):]
			}
			if r.entry.Reason == inject.ReasonInvalidStatus {
				out["mark-record"]++
				msg = msg[:strings.Index(msg, ": not a valid status record")] + ": not a valid status record (not as kubectl-inject writes it)"
			}
			if utf8.RuneCountInString(msg) > admission.MarkMessageLimit {
				out["mark-truncated"]++
			}
		}
	}
	return out
}

// withAnnotation is a copy of a stored Pod with annotation key set to
// value.
func withAnnotation(pod map[string]any, key, value string) map[string]any {
	out := deepCopy(pod)
	meta, _ := out["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		out["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[key] = value
	return out
}

func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = deepCopy(sub)
		}
		out[k] = v
	}
	return out
}

// checkExclusions holds the exclusions the comparisons made to the ones
// predicted, reason by reason, and to the list.
func checkExclusions(t *testing.T, got, predicted map[string]int) {
	t.Helper()
	for reason, n := range got {
		if _, listed := exclusions[reason]; !listed {
			t.Errorf("%d Pods excluded for %q, which the test does not list", n, reason)
		}
	}
	for reason := range exclusions {
		if got[reason] != predicted[reason] {
			t.Errorf("excluded for %s: %d Pods, the core's report predicts %d", reason, got[reason], predicted[reason])
		}
	}
}

// expectedUncompiled is how many Pods the corpus cases whose configs
// compile to no policy (podgen.UncompiledConfigs) hold: none of them is
// created under a policy.
func expectedUncompiled(t *testing.T, seen map[string]string) int {
	t.Helper()
	n := 0
	for name := range podgen.UncompiledConfigs {
		if _, ok := seen[name]; !ok {
			t.Errorf("corpus config %s is pinned as compiling to no policy, but it compiles (or is gone): take it off podgen.UncompiledConfigs", name)
		}
		pods, err := podgen.CasePods("../../pkg/inject/testdata/golden/" + name)
		if err != nil {
			t.Fatal(err)
		}
		n += len(pods)
	}
	return n
}

// sameExceptMark reports whether two stored Pods are equal once the
// first's skip annotation is set to the second's.
func sameExceptMark(got, want map[string]any, key string) bool {
	mark, ok := annotation(want, key)
	return ok && reflect.DeepEqual(withAnnotation(got, key, mark), want)
}

// compare holds the Pod stored under the policy to want, the one stored
// from the core's output, and returns the exclusions it needed: none when
// they are equal; record-updated for a Pod whose stale record the core
// updates and the policy leaves (then the Pod must be stored as created);
// a mark rewrite the policy's words explain. ok is false when they differ
// for any other reason.
func (r podRun) compare(t *testing.T, want map[string]any, hadStatus bool, skipKey string) (reasons []string, ok bool) {
	t.Helper()
	switch {
	case reflect.DeepEqual(r.admitted, want):
		return nil, true
	case hadStatus && r.entry.Action == inject.Updated:
		asCreated, err := createPod(t, r.decoded, false)
		deletePod(t, r.decoded)
		return []string{"record-updated"}, err == nil && reflect.DeepEqual(r.admitted, asCreated)
	}
	wantMark, wanted := annotation(want, skipKey)
	mark, _ := annotation(r.admitted, skipKey)
	if !wanted || !sameExceptMark(r.admitted, want, skipKey) {
		return nil, false
	}
	return podgen.MarkDifference(wantMark, mark)
}

// carriesBootstrap reports whether the template of in adds the Envoy
// sidecar with a bootstrap: a plain Pod (opted in, in a namespace every
// suite selects) injected by the core has one.
func carriesBootstrap(t *testing.T, in *inject.Injector) bool {
	t.Helper()
	out, e := coreInject(t, in, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: plain, namespace: ns-a, annotations: {"+
		naming.InjectAnnotationFor(in.Profile())+": \"true\"}}\nspec:\n  containers: [{name: app, image: busybox, ports: [{containerPort: 8080}]}]\n"))
	if e.Action != inject.Injected {
		t.Fatalf("a plain Pod, opted in: the core %s %s: %s", e.Action, e.Reason, e.Message)
	}
	spec, _ := podFrom(t, out).Object["spec"].(map[string]any)
	return envoycheck.Sidecar(spec) != nil
}
