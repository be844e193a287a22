package admission_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// TestReasons takes its configs from podgen (Reasons*), as pkg/inject's
// does: neither test reads the other's expectations, nor the embedded
// default's, so a rule the policy shares with the core (a list, a message
// format) that changes on both sides fails both.

// admissionCase is a Pod and what the API server does with it under the
// policy, written out.
type admissionCase struct {
	name   string
	config string
	// others are the configs of the profiles injected into the Pod at
	// build time, in order.
	others []string
	pod    string
	// notSelected: the binding leaves the Pod out (its namespace, its
	// labels); the policy never sees it.
	notSelected bool
	injected    bool
	// mark is the skip annotation the policy writes; warning the
	// validating policy's warning.
	mark, warning string
}

// pod is a Pod manifest: metadata (a flow mapping's inside) and the
// spec (YAML under spec, indented two).
func pod(metadata, spec string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, " + metadata + "}\nspec:\n" + spec
}

const appContainer = "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 8080}]}\n"

// admissionCases are the Pods of pkg/inject's reason cases that the
// policy sees (Pods only), with what it writes on each.
var admissionCases = []admissionCase{{
	name: "a plain Pod is injected", config: podgen.ReasonsProxy,
	pod:      pod("namespace: ns-a", appContainer),
	injected: true,
}, {
	name: "already injected", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsProxy},
	pod: pod("namespace: ns-a", appContainer),
}, {
	name: "a namespace the config does not list", config: podgen.ReasonsOptIn,
	pod:         pod("namespace: ns-c", appContainer),
	notSelected: true,
}, {
	name: "an excluded namespace", config: podgen.ReasonsProxy,
	pod:         pod("namespace: ns-excluded", appContainer),
	notSelected: true,
}, {
	name: "labels the selector does not match", config: podgen.ReasonsOptIn,
	pod:         pod("namespace: ns-a, labels: {tier: db}, annotations: {sidecar.kinject.dev/inject: \"true\"}", appContainer),
	notSelected: true,
}, {
	name: "opted out", config: podgen.ReasonsProxy,
	pod:  pod("namespace: ns-a, annotations: {sidecar.kinject.dev/inject: \"False\"}", appContainer),
	mark: "opted_out",
}, {
	name: "not opted in", config: podgen.ReasonsOptIn,
	pod: pod("namespace: ns-a", appContainer),
}, {
	name: "opted in by the seed annotation", config: podgen.ReasonsOptIn,
	pod:      pod("namespace: ns-a, annotations: {initializer.kubernetes.io/envoy: \"true\"}", appContainer),
	injected: true,
}, {
	name: "the host's network", config: podgen.ReasonsProxy,
	pod:  pod("namespace: ns-a", "  hostNetwork: true\n"+appContainer),
	mark: "host_network",
}, {
	name: "istio's proxy", config: podgen.ReasonsProxy,
	pod:  pod("namespace: ns-a", appContainer+"  - {name: istio-proxy, image: istio/proxyv2}\n"),
	mark: "other_mesh",
}, {
	name: "linkerd's proxy as an init container", config: podgen.ReasonsProxy,
	pod:  pod("namespace: ns-a", appContainer+"  initContainers:\n  - {name: linkerd-proxy, image: linkerd/proxy}\n"),
	mark: "other_mesh",
}, {
	name: "a static pod's mirror", config: podgen.ReasonsProxy,
	pod:  pod("namespace: ns-a, annotations: {kubernetes.io/config.mirror: abc}", appContainer),
	mark: "mirror_pod",
}, {
	name: "a container of the sidecar's name", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a", appContainer+"  - {name: proxy, image: example.com/mine:v1}\n"),
	mark:    `conflict: spec.containers: container "proxy" already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added)`,
	warning: `sidecar not injected by kinject-envoy: spec.containers: container "proxy" already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added)`,
}, {
	name: "a volume of the template's name that differs", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a", appContainer+"  volumes:\n  - {name: proxy-conf, configMap: {name: mine}}\n"),
	mark:    `conflict: spec.volumes: volume "proxy-conf" already exists and differs from the template's: the template's is {"emptyDir":{},"name":"proxy-conf"} (rename one, or make them equal so the pod's is used)`,
	warning: `sidecar not injected by kinject-envoy: spec.volumes: volume "proxy-conf" already exists and differs from the template's: the template's is {"emptyDir":{},"name":"proxy-conf"} (rename one, or make them equal so the pod's is used)`,
}, {
	name: "the sidecar's port used by the app", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a", "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 15000}]}\n"),
	mark:    `conflict: spec.containers: sidecar "proxy" port 15000 is already used by container "app"`,
	warning: `sidecar not injected by kinject-envoy: spec.containers: sidecar "proxy" port 15000 is already used by container "app"`,
}, {
	// A sidecar that declares its ports and reserves none: every port is
	// worded as declared.
	name: "a port of a sidecar that reserves none", config: podgen.ReasonsOtherPort,
	pod:     pod("namespace: ns-a", "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 15000}]}\n"),
	mark:    `conflict: spec.containers: sidecar "other" port 15000 is already used by container "app"`,
	warning: `sidecar not injected by kinject-envoy-other: spec.containers: sidecar "other" port 15000 is already used by container "app"`,
}, {
	name: "a reserved port used by the app", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a", "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 8080}]}\n  - {name: side, image: busybox, ports: [{containerPort: 15001}]}\n"),
	mark:    `conflict: spec.containers: sidecar "proxy" binds port 15001 (outbound capture), which container "side" already uses (the app must listen on another port)`,
	warning: `sidecar not injected by kinject-envoy: spec.containers: sidecar "proxy" binds port 15001 (outbound capture), which container "side" already uses (the app must listen on another port)`,
}, {
	name: "an override that names the sidecar's port", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a, annotations: {sidecar.kinject.dev/app-port: \"15000\"}", appContainer),
	mark:    `invalid_object: metadata.annotations["sidecar.kinject.dev/app-port"]: "15000" is a port of sidecar "proxy" (containerPort), not the app's`,
	warning: `sidecar not injected by kinject-envoy: metadata.annotations["sidecar.kinject.dev/app-port"]: "15000" is a port of sidecar "proxy" (containerPort), not the app's`,
}, {
	name: "an expression that gives the sidecar's port", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a", "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 15001, protocol: UDP}]}\n"),
	mark:    `conflict: parameters: app-port: the expression gives port 15001, a port of sidecar "proxy" (outbound capture), not the app's`,
	warning: `sidecar not injected by kinject-envoy: parameters: app-port: the expression gives port 15001, a port of sidecar "proxy" (outbound capture), not the app's`,
}, {
	name: "an override value of the wrong type", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a, annotations: {sidecar.kinject.dev/cpu: lots}", appContainer),
	mark:    `invalid_object: metadata.annotations["sidecar.kinject.dev/cpu"]: "lots" is not a resource quantity such as 250m, 0.5 or 1Gi (it sets containers[proxy].resources.requests.cpu)`,
	warning: `sidecar not injected by kinject-envoy: metadata.annotations["sidecar.kinject.dev/cpu"]: "lots" is not a resource quantity such as 250m, 0.5 or 1Gi (it sets containers[proxy].resources.requests.cpu)`,
}, {
	name: "a record that is not JSON", config: podgen.ReasonsProxy,
	pod:  pod("namespace: ns-a, annotations: {sidecar.kinject.dev/status: \"{not json\"}", appContainer),
	mark: "", warning: "",
}, {
	name: "a container another profile added", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherContainer},
	pod:     pod("namespace: ns-a", appContainer),
	mark:    `conflict: container "proxy" (spec.containers) is added by profile "other" and by the default profile: two profiles cannot add the same container (change one of the templates)`,
	warning: `sidecar not injected by kinject-envoy: container "proxy" (spec.containers) is added by profile "other" and by the default profile: two profiles cannot add the same container (change one of the templates)`,
}, {
	name: "a volume another profile added", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherVolume},
	pod:     pod("namespace: ns-a", appContainer),
	mark:    `conflict: volume "proxy-conf" (spec.volumes) is added by profile "other" and by the default profile: two profiles cannot add the same volume (change one of the templates)`,
	warning: `sidecar not injected by kinject-envoy: volume "proxy-conf" (spec.volumes) is added by profile "other" and by the default profile: two profiles cannot add the same volume (change one of the templates)`,
}, {
	name: "a port another profile's sidecar has", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherPort},
	pod:     pod("namespace: ns-a", appContainer),
	mark:    `conflict: port 15000/TCP (spec.containers, sidecars "other" and "proxy") is added by profile "other" and by the default profile: two profiles cannot add the same port (change one of the templates)`,
	warning: `sidecar not injected by kinject-envoy: port 15000/TCP (spec.containers, sidecars "other" and "proxy") is added by profile "other" and by the default profile: two profiles cannot add the same port (change one of the templates)`,
}, {
	name: "a label another profile added", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherLabel},
	pod:     pod("namespace: ns-a", appContainer),
	mark:    `conflict: label "mesh" (metadata.labels) is added by profile "other" and by the default profile: two profiles cannot add the same label (change one of the templates)`,
	warning: `sidecar not injected by kinject-envoy: label "mesh" (metadata.labels) is added by profile "other" and by the default profile: two profiles cannot add the same label (change one of the templates)`,
}, {
	name: "a classic sidecar into a Pod that runs to completion", config: podgen.ReasonsProxy,
	pod:     pod("namespace: ns-a", "  restartPolicy: Never\n"+appContainer),
	mark:    `runs_to_completion: spec.restartPolicy: "Never": the pod runs to completion, and classic sidecar "proxy" would keep it running after the app exits (inject a native sidecar: --native, or native: true)`,
	warning: `sidecar not injected by kinject-envoy: spec.restartPolicy: "Never": the pod runs to completion, and classic sidecar "proxy" would keep it running after the app exits (inject a native sidecar: --native, or native: true)`,
}}

// TestReasons admits each Pod of admissionCases in-process under its
// compiled policy and holds what the policy did to the written-out
// expectation: injected or not, the skip annotation's reason code and
// message, the validating policy's warning.
func TestReasons(t *testing.T) {
	t.Parallel()
	for _, c := range admissionCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in, p, sp := compiledPolicy(t, c.config)
			manifest := []byte(c.pod)
			for i, config := range c.others {
				other, err := podgen.Injector(config)
				if err != nil {
					t.Fatal(err)
				}
				out, e := coreEntry(t, other, manifest)
				if e.Action != inject.Injected {
					t.Fatalf("other profile %d: %s", i, e)
				}
				manifest = out
			}
			pod, err := decodePod(manifest)
			if err != nil {
				t.Fatal(err)
			}
			sel, err := readBinding(p)
			if err != nil {
				t.Fatal(err)
			}
			if selected := sel.selects(pod); selected == c.notSelected {
				t.Fatalf("the binding selects the Pod: %v, want %v", selected, !c.notSelected)
			}
			if c.notSelected {
				return
			}
			var param runtime.Object
			if p.Requires != nil {
				param = &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: p.Requires.Kind}, ObjectMeta: metav1.ObjectMeta{Name: p.Requires.Name}}
			}
			_, hadRecord := pod.Annotations[in.StatusAnnotation()]
			got, err := sp.admit(pod, param)
			if err != nil {
				t.Fatal(err)
			}
			_, record := got.pod.Annotations[in.StatusAnnotation()]
			mark := got.pod.Annotations[naming.SkippedAnnotationFor(in.Profile())]
			warning := ""
			if len(got.warnings) > 0 {
				warning = got.warnings[0]
			}
			if injected := record && !hadRecord; injected != c.injected || mark != c.mark || warning != c.warning || len(got.warnings) > 1 {
				t.Errorf("injected %v, mark, warnings:\n%q\n%q\nwant injected %v, mark, warning:\n%q\n%q", injected, mark, got.warnings, c.injected, c.mark, c.warning)
			}
		})
	}
}

// TestSkipCode: the policy marks the skips it sees (opted out, the host's
// network, another mesh) and every refusal; not the opt-in mode's, nor
// the binding's, which it never sees.
func TestSkipCode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		entry  inject.Entry
		marked string
	}{
		{"injected", inject.Entry{Action: inject.Injected}, ""},
		{"opted out", inject.Entry{Action: inject.Skipped, Reason: inject.ReasonOptedOut}, "opted_out"},
		{"the host's network", inject.Entry{Action: inject.Skipped, Reason: inject.ReasonHostNetwork}, "host_network"},
		{"another mesh", inject.Entry{Action: inject.Skipped, Reason: inject.ReasonOtherMesh}, "other_mesh"},
		{"not opted in", inject.Entry{Action: inject.Skipped, Reason: inject.ReasonNotOptedIn}, ""},
		{"a namespace the binding leaves out", inject.Entry{Action: inject.Skipped, Reason: inject.ReasonNamespaceNotSelect}, ""},
		{"a conflict", inject.Entry{Action: inject.Failed, Reason: inject.ReasonConflict}, "conflict"},
		{"a record it cannot read", inject.Entry{Action: inject.Failed, Reason: inject.ReasonInvalidStatus}, "invalid_status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := podgen.SkipCode(c.entry); got != c.marked {
				t.Errorf("SkipCode = %q, want %q", got, c.marked)
			}
		})
	}
}
