package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// policyResources are the resources of the compiled policy's kinds.
var policyResources = map[string]string{
	admission.KindMutatingPolicy:          "mutatingadmissionpolicies",
	admission.KindMutatingPolicyBinding:   "mutatingadmissionpolicybindings",
	admission.KindValidatingPolicy:        "validatingadmissionpolicies",
	admission.KindValidatingPolicyBinding: "validatingadmissionpolicybindings",
	"MutatingWebhookConfiguration":        "mutatingwebhookconfigurations",
}

// policyGVR is the resource of a kind of the compiled policy.
func policyGVR(kind string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: policyResources[kind]}
}

// warnings counts the API server's warnings that the conflicts policy
// (the ValidatingAdmissionPolicy) returns.
type warnings struct {
	mu sync.Mutex
	n  int
}

// HandleWarningHeader counts the warnings of the conflicts policy.
func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	if strings.Contains(text, "sidecar not injected by") {
		w.mu.Lock()
		w.n++
		w.mu.Unlock()
	}
}

// take returns the count and resets it.
func (w *warnings) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.n
	w.n = 0
	return n
}

// waitPolicy waits until both policies run (active) or neither does, as
// test/admission does, with server-side dry-run creates: the bench Pod
// comes back injected once the mutating policy runs, and a Pod with a
// container of the sidecar's name draws a warning once the validating
// policy runs. cs must report warnings to w.
func waitPolicy(ctx context.Context, cs kubernetes.Interface, w *warnings, active bool) error {
	conflicting := benchPod("default", "probe-conflict")
	conflicting.Spec.Containers = append(conflicting.Spec.Containers, corev1.Container{Name: "envoy", Image: "busybox"})
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	return poll(fmt.Sprintf("the policies did not become active=%v", active), func() (bool, error) {
		got, err := cs.CoreV1().Pods("default").Create(ctx, benchPod("default", "probe"), dry)
		if err != nil {
			return false, err
		}
		_, injected := got.Annotations[naming.StatusAnnotation]
		w.take()
		if _, err = cs.CoreV1().Pods("default").Create(ctx, conflicting, dry); err != nil {
			return false, err
		}
		warned := w.take() > 0
		return injected == active && warned == active, nil
	})
}

// poll calls done every 50 ms until it reports true, for at most 60 s;
// then it fails with what and done's last error.
func poll(what string, done func() (bool, error)) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := done()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s within 60s (last error: %v)", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitSide waits until the policy of side (sideOn: the compiled policy,
// and sideBaseline, another version of it: waitPolicy; sideFloor: the constant one, which injects the probe and
// warns about nothing) runs, or until it no longer does.
func waitSide(ctx context.Context, cs kubernetes.Interface, w *warnings, side string, active bool) error {
	if side == sideOn || side == sideBaseline {
		return waitPolicy(ctx, cs, w, active)
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	return poll(fmt.Sprintf("the %s policy did not become active=%v", side, active), func() (bool, error) {
		got, err := cs.CoreV1().Pods("default").Create(ctx, benchPod("default", "probe"), dry)
		if err != nil {
			return false, err
		}
		_, injected := got.Annotations[naming.StatusAnnotation]
		return injected == active, nil
	})
}
