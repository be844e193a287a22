package envoy_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// restrictedApp is a Pod that sets no Pod-level security settings: its
// app container is restricted on its own, so whatever the evaluation
// finds is the sidecar's.
const restrictedApp = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: busybox
    ports: [{containerPort: 8080}]
    securityContext:
      runAsNonRoot: true
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
      seccompProfile: {type: RuntimeDefault}
`

// restrictedViolations evaluates a Pod with the Pod Security admission
// library (the API server's own) at "restricted", latest version.
func restrictedViolations(t *testing.T, pod *corev1.Pod) []string {
	t.Helper()
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	var out []string
	for _, r := range eval.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return out
}

func injectedRestrictedApp(t *testing.T) *corev1.Pod {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	out, entries := in.ProcessText(inject.OpInject, []byte(restrictedApp), 0)
	if len(entries) != 1 || entries[0].Action != inject.Injected {
		t.Fatalf("entries %v", entries)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(out, &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
}

// TestSidecarAloneIsRestricted: the injected default passes Pod Security
// "restricted" with no help from the Pod, and removing any one field of
// the sidecar's securityContext fails a check: the library's, or, for the
// fields "restricted" does not require, the one that says why the
// sidecar sets it.
func TestSidecarAloneIsRestricted(t *testing.T) {
	plain := injectedRestrictedApp(t)
	if plain.Spec.SecurityContext != nil {
		t.Fatalf("the test's Pod has Pod-level security settings: %+v", plain.Spec.SecurityContext)
	}
	if v := restrictedViolations(t, plain); len(v) > 0 {
		t.Fatalf("the injected Pod is not restricted: %s", strings.Join(v, "; "))
	}
	envoy := func(p *corev1.Pod) *corev1.SecurityContext {
		c := envoyContainer(p)
		if c == nil {
			t.Fatal("no envoy container")
		}
		return c.SecurityContext
	}
	// houseChecks are what the sidecar needs beyond "restricted".
	houseChecks := func(sc *corev1.SecurityContext) []string {
		var out []string
		if sc.RunAsUser == nil || *sc.RunAsUser == 0 {
			// The image's user is a name: with runAsNonRoot and no
			// numeric uid the kubelet refuses to start the container.
			out = append(out, "runAsUser: not a numeric non-root uid")
		}
		if sc.RunAsGroup == nil || *sc.RunAsGroup == 0 {
			out = append(out, "runAsGroup: root group")
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			out = append(out, "readOnlyRootFilesystem: Envoy writes nothing with hot restart off")
		}
		return out
	}
	if v := houseChecks(envoy(plain)); len(v) > 0 {
		t.Fatalf("the sidecar: %s", strings.Join(v, "; "))
	}
	for _, c := range []struct {
		field string
		drop  func(*corev1.SecurityContext)
	}{
		{"runAsNonRoot", func(sc *corev1.SecurityContext) { sc.RunAsNonRoot = nil }},
		{"runAsUser", func(sc *corev1.SecurityContext) { sc.RunAsUser = nil }},
		{"runAsGroup", func(sc *corev1.SecurityContext) { sc.RunAsGroup = nil }},
		{"allowPrivilegeEscalation", func(sc *corev1.SecurityContext) { sc.AllowPrivilegeEscalation = nil }},
		{"capabilities", func(sc *corev1.SecurityContext) { sc.Capabilities = nil }},
		{"capabilities.drop", func(sc *corev1.SecurityContext) { sc.Capabilities.Drop = nil }},
		{"readOnlyRootFilesystem", func(sc *corev1.SecurityContext) { sc.ReadOnlyRootFilesystem = nil }},
		{"seccompProfile", func(sc *corev1.SecurityContext) { sc.SeccompProfile = nil }},
		{"securityContext", nil},
	} {
		t.Run(c.field, func(t *testing.T) {
			pod := injectedRestrictedApp(t)
			sc := envoy(pod)
			if c.drop == nil {
				envoyContainer(pod).SecurityContext = nil
				sc = &corev1.SecurityContext{}
			} else {
				c.drop(sc)
			}
			if len(restrictedViolations(t, pod))+len(houseChecks(sc)) == 0 {
				t.Errorf("without %s the sidecar still passes every check", c.field)
			}
		})
	}
}

// envoyContainer is the injected sidecar, a native one (an init
// container) or a classic one, or nil.
func envoyContainer(p *corev1.Pod) *corev1.Container {
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range list {
			if list[i].Name == "envoy" {
				return &list[i]
			}
		}
	}
	return nil
}
