package inject_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// reasonsCore, beside the configs of podgen's Reasons*: written out
// rather than taken from the embedded default or the golden corpus.
const (
	// reasonsCore selects the core API group only, in the words of
	// kubectl (core for ""), and is the profile mesh, opt-in.
	reasonsCore = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: mesh}
spec:
  profile: mesh
  mode: opt-in
  apiGroups: [core]
  template:
    containers:
    - name: mesh-proxy
      image: example.com/proxy:v1
`
)

// reasonCase is a Pod (or another object) and what the core reports
// about it, written out.
type reasonCase struct {
	name   string
	config string
	// others are the configs of the profiles injected into the object
	// first, in order.
	others []string
	// op is what is done to the object: inject, the zero Op, or uninject.
	op      inject.Op
	object  string
	action  inject.Action
	reason  inject.Reason
	message string
	// conflict names the kind of a conflict (inject.ConflictKind's Name):
	// TestEveryReasonHasACase requires one case of each kind.
	conflict string
}

// pod is a Pod manifest: metadata (a flow mapping's inside) and the
// spec's containers and anything else (YAML under spec, indented two).
func pod(metadata, spec string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, " + metadata + "}\nspec:\n" + spec
}

const (
	appContainer = "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 8080}]}\n"
	// templateContainer is appContainer in a pod template's spec.
	templateContainer = "      containers:\n      - {name: app, image: busybox, ports: [{containerPort: 8080}]}\n"
)

// reasonCases are the reasons the core reports for one workload or Pod,
// with the reason code and the message; documentReasonCases holds the
// rest, and TestEveryReasonHasACase requires them all.
var reasonCases = []reasonCase{{
	name: "a plain Pod is injected", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", appContainer),
	action: inject.Injected,
}, {
	name: "already injected", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsProxy},
	object: pod("namespace: ns-a", appContainer),
	action: inject.Unchanged,
}, {
	name: "not a workload", config: podgen.ReasonsProxy,
	object: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n",
	action: inject.Skipped, reason: inject.ReasonNotAWorkload,
}, {
	name: "a kind the config leaves out", config: podgen.ReasonsOptIn,
	object: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: ns-a}\nspec:\n  template:\n    spec:\n" + templateContainer,
	action: inject.Skipped, reason: inject.ReasonKindNotSelected,
	message: "kind StatefulSet is not in Pod,Deployment",
}, {
	name: "a namespace the config does not list", config: podgen.ReasonsOptIn,
	object: pod("namespace: ns-c", appContainer),
	action: inject.Skipped, reason: inject.ReasonNamespaceNotSelect,
	message: "namespace ns-c is not in ns-a,ns-b",
}, {
	name: "no namespace counts as default", config: podgen.ReasonsOptIn,
	object: pod("annotations: {sidecar.kinject.dev/inject: \"true\"}", appContainer),
	action: inject.Skipped, reason: inject.ReasonNamespaceNotSelect,
	message: "namespace default is not in ns-a,ns-b",
}, {
	name: "an excluded namespace", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-excluded", appContainer),
	action: inject.Skipped, reason: inject.ReasonNamespaceNotSelect,
	message: "namespace ns-excluded is excluded",
}, {
	name: "labels the selector does not match", config: podgen.ReasonsOptIn,
	object: pod("namespace: ns-a, labels: {tier: db}, annotations: {sidecar.kinject.dev/inject: \"true\"}", appContainer),
	action: inject.Skipped, reason: inject.ReasonLabelsNotSelected,
	message: `labels do not match "tier!=db"`,
}, {
	name: "the core API group as core", config: reasonsCore,
	object: pod("namespace: ns-a, annotations: {mesh.sidecar.kinject.dev/inject: \"true\"}", appContainer),
	action: inject.Injected,
}, {
	name: "an API group the config leaves out", config: reasonsCore,
	object: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {mesh.sidecar.kinject.dev/inject: \"true\"}}\nspec:\n  template:\n    spec:\n" + templateContainer,
	action: inject.Skipped, reason: inject.ReasonKindNotSelected, message: `API group "apps" is not in core`,
}, {
	name: "a profile's Pod not opted in", config: reasonsCore,
	object: pod("namespace: ns-a, annotations: {sidecar.kinject.dev/inject: \"true\"}", appContainer),
	action: inject.Skipped, reason: inject.ReasonNotOptedIn, message: `mode is opt-in and mesh.sidecar.kinject.dev/inject is not "true"`,
}, {
	name: "opted out on the Pod", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a, annotations: {sidecar.kinject.dev/inject: \"False\"}", appContainer),
	action: inject.Skipped, reason: inject.ReasonOptedOut,
	message: `sidecar.kinject.dev/inject is "false"`,
}, {
	// Without ASCII case only, as the admission policy's lowerAscii:
	// "ſ" (U+017F) is not an "s" there, so it is not here either.
	name: "a value that folds to false outside ASCII only", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a, annotations: {sidecar.kinject.dev/inject: \"falſe\"}", appContainer),
	action: inject.Injected,
}, {
	name: "opted out on the workload", config: podgen.ReasonsProxy,
	object: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {sidecar.kinject.dev/inject: \"false\"}}\nspec:\n  template:\n    spec:\n" + templateContainer,
	action: inject.Skipped, reason: inject.ReasonOptedOut,
	message: `sidecar.kinject.dev/inject is "false"`,
}, {
	name: "not opted in", config: podgen.ReasonsOptIn,
	object: pod("namespace: ns-a", appContainer),
	action: inject.Skipped, reason: inject.ReasonNotOptedIn,
	message: `mode is opt-in and neither sidecar.kinject.dev/inject nor initializer.kubernetes.io/envoy is "true"`,
}, {
	name: "opted in by the seed annotation", config: podgen.ReasonsOptIn,
	object: pod("namespace: ns-a, annotations: {initializer.kubernetes.io/envoy: \"true\"}", appContainer),
	action: inject.Injected,
}, {
	name: "the host's network", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", "  hostNetwork: true\n"+appContainer),
	action: inject.Skipped, reason: inject.ReasonHostNetwork,
	message: "the pod uses the host's network; a sidecar would share the node's ports",
}, {
	name: "istio's proxy", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", appContainer+"  - {name: istio-proxy, image: istio/proxyv2}\n"),
	action: inject.Skipped, reason: inject.ReasonOtherMesh,
	message: "the pod already has istio-proxy",
}, {
	name: "linkerd's proxy as an init container", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", appContainer+"  initContainers:\n  - {name: linkerd-proxy, image: linkerd/proxy}\n"),
	action: inject.Skipped, reason: inject.ReasonOtherMesh,
	message: "the pod already has linkerd-proxy",
}, {
	name: "a static pod's mirror", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a, annotations: {kubernetes.io/config.mirror: abc}", appContainer),
	action: inject.Skipped, reason: inject.ReasonMirrorPod,
	message: "the pod is a static pod's mirror (kubernetes.io/config.mirror): a sidecar added here would never run",
}, {
	name: "a container of the sidecar's name", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", appContainer+"  - {name: proxy, image: example.com/mine:v1}\n"),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictContainer.Name,
	message: `spec.containers: container "proxy" already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added)`,
}, {
	name: "a volume of the template's name that differs", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", appContainer+"  volumes:\n  - {name: proxy-conf, configMap: {name: mine}}\n"),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictVolume.Name,
	message: `spec.volumes: volume "proxy-conf" already exists and differs from the template's: the pod's is {"configMap":{"name":"mine"},"name":"proxy-conf"}, the template's is {"emptyDir":{},"name":"proxy-conf"} (rename one, or make them equal so the pod's is used)`,
}, {
	name: "the sidecar's port used by the app", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 15000}]}\n"),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictPort.Name,
	message: `spec.containers: sidecar "proxy" port 15000 is already used by container "app"`,
}, {
	name: "a reserved port used by the app", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 8080}]}\n  - {name: side, image: busybox, ports: [{containerPort: 15001}]}\n"),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictPort.Name,
	message: `spec.containers: sidecar "proxy" binds port 15001 (outbound capture), which container "side" already uses (the app must listen on another port)`,
}, {
	name: "an override that names the sidecar's port", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a, annotations: {sidecar.kinject.dev/app-port: \"15000\"}", appContainer),
	action: inject.Failed, reason: inject.ReasonInvalidObject,
	message: `metadata.annotations["sidecar.kinject.dev/app-port"]: "15000" is a port of sidecar "proxy" (containerPort), not the app's`,
}, {
	name: "an expression that gives the sidecar's port", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", "  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 15001, protocol: UDP}]}\n"),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictPort.Name,
	message: `parameters: app-port: the expression gives port 15001, a port of sidecar "proxy" (outbound capture), not the app's`,
}, {
	name: "an override value of the wrong type", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a, annotations: {sidecar.kinject.dev/cpu: lots}", appContainer),
	action: inject.Failed, reason: inject.ReasonInvalidObject,
	message: `metadata.annotations["sidecar.kinject.dev/cpu"]: "lots" is not a resource quantity such as 250m, 0.5 or 1Gi (it sets containers[proxy].resources.requests.cpu)`,
}, {
	name: "a record that is not JSON", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a, annotations: {sidecar.kinject.dev/status: \"{not json\"}", appContainer),
	action: inject.Failed, reason: inject.ReasonInvalidStatus,
	message: "metadata.annotations: annotation sidecar.kinject.dev/status: not a valid status record: invalid character 'n' looking for beginning of object key string",
}, {
	name: "a container another profile added", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherContainer},
	object: pod("namespace: ns-a", appContainer),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictContainer.Name,
	message: `container "proxy" (spec.containers) is added by profile "other" and by the default profile: two profiles cannot add the same container (change one of the templates)`,
}, {
	name: "a volume another profile added", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherVolume},
	object: pod("namespace: ns-a", appContainer),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictVolume.Name,
	message: `volume "proxy-conf" (spec.volumes) is added by profile "other" and by the default profile: two profiles cannot add the same volume (change one of the templates)`,
}, {
	name: "a port another profile's sidecar has", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherPort},
	object: pod("namespace: ns-a", appContainer),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictPort.Name,
	message: `port 15000/TCP (spec.containers, sidecars "other" and "proxy") is added by profile "other" and by the default profile: two profiles cannot add the same port (change one of the templates)`,
}, {
	name: "a label another profile added", config: podgen.ReasonsProxy, others: []string{podgen.ReasonsOtherLabel},
	object: pod("namespace: ns-a", appContainer),
	action: inject.Failed, reason: inject.ReasonConflict, conflict: inject.ConflictLabel.Name,
	message: `label "mesh" (metadata.labels) is added by profile "other" and by the default profile: two profiles cannot add the same label (change one of the templates)`,
}, {
	name: "a classic sidecar into a Pod that runs to completion", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", "  restartPolicy: Never\n"+appContainer),
	action: inject.Failed, reason: inject.ReasonRunsToCompletion,
	message: `spec.restartPolicy: "Never": the pod runs to completion, and classic sidecar "proxy" would keep it running after the app exits (inject a native sidecar: --native, or native: true)`,
}}

// TestReasons holds the core's report on each object of reasonCases to
// its written-out reason code and message: a rule the admission policy
// shares with the core (a list, a message format) that changes changes
// this test, whatever -update does to the goldens.
func TestReasons(t *testing.T) {
	t.Parallel()
	for _, c := range allReasonCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := reasonEntry(t, c)
			if e.Action != c.action || e.Reason != c.reason || e.Message != c.message {
				t.Errorf("got %s %s\n%q\nwant %s %s\n%q", e.Action, e.Reason, e.Message, c.action, c.reason, c.message)
			}
			// A case counts for a kind of conflict only if its message
			// names the kind.
			if c.conflict != "" && (c.reason != inject.ReasonConflict || !strings.Contains(c.message, c.conflict+" ")) {
				t.Errorf("a case of the %s conflict whose reason is %s and whose message does not name a %s", c.conflict, c.reason, c.conflict)
			}
		})
	}
}

// reasonEntry injects c's other profiles, then applies c's op with c's
// config, and returns the last report entry.
func reasonEntry(t *testing.T, c reasonCase) inject.Entry {
	t.Helper()
	doc := []byte(c.object)
	for i, config := range c.others {
		out, entries := reasonsInjector(t, config).ProcessText(inject.OpInject, doc, 0)
		if len(entries) != 1 || entries[0].Action != inject.Injected {
			t.Fatalf("other profile %d: %v", i, entries)
		}
		doc = out
	}
	_, entries := reasonsInjector(t, c.config).ProcessText(c.op, doc, 0)
	if len(entries) != 1 {
		t.Fatalf("%d report entries", len(entries))
	}
	return entries[0]
}

func reasonsInjector(t *testing.T, config string) *inject.Injector {
	t.Helper()
	node, err := yaml.Parse(config)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := inject.LoadConfig(node, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
