package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// portPods are Pods whose port the default's app-port expression reads:
// ports that differ, a named port, UDP before TCP, several containers, no
// port, only UDP, an override, and a bad override. The differential test
// runs them under the default policy and from --local's output.
func portPods() [][]byte {
	cases := []struct{ name, annotations, containers string }{
		{"port-80", "", "[{name: app, image: nginx, ports: [{containerPort: 80}]}]"},
		{"port-3000", "", "[{name: app, image: node, ports: [{containerPort: 3000, protocol: TCP}]}]"},
		{"named", "", "[{name: app, image: a, ports: [{name: http, containerPort: 8443}]}]"},
		{"udp-first", "", "[{name: app, image: dns, ports: [{containerPort: 53, protocol: UDP}, {containerPort: 5353}]}]"},
		{"several", "", "[{name: app, image: a, ports: [{containerPort: 5000}]}, {name: cache, image: redis, ports: [{containerPort: 6379}]}]"},
		{"no-port", "", "[{name: worker, image: w}]"},
		{"only-udp", "", "[{name: app, image: dns, ports: [{containerPort: 53, protocol: UDP}]}]"},
		{"override", `sidecar.kinject.dev/app-port: "9090"`, "[{name: app, image: a, ports: [{containerPort: 5000}]}]"},
		{"bad-override", `sidecar.kinject.dev/app-port: http`, "[{name: app, image: a, ports: [{name: http, containerPort: 5000}]}]"},
		{"sidecar-port", "", "[{name: app, image: a, ports: [{containerPort: 10000}]}]"},
	}
	var out [][]byte
	for _, c := range cases {
		meta := fmt.Sprintf("{name: app-port-%s, namespace: ns-a}", c.name)
		if c.annotations != "" {
			meta = fmt.Sprintf("{name: app-port-%s, namespace: ns-a, annotations: {%s}}", c.name, c.annotations)
		}
		out = append(out, []byte("apiVersion: v1\nkind: Pod\nmetadata: "+meta+"\nspec:\n  containers: "+c.containers+"\n"))
	}
	return out
}

// restrictedPod passes Pod Security "restricted" by itself.
const restrictedPod = `apiVersion: v1
kind: Pod
metadata: {name: NAME, namespace: NS}
spec:
  securityContext:
    runAsNonRoot: true
    runAsUser: 1000
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: app
    image: registry.local/app:1
    ports: [{containerPort: 8080}]
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
`

// TestRestrictedNamespace: in a namespace that enforces Pod Security
// "restricted", an app Pod that passes it is still admitted once the
// default policy injected it, and the sidecar is there.
func TestRestrictedNamespace(t *testing.T) {
	c.Require(t)
	const ns = "restricted"
	ensureNamespace(t, ns)
	nsObj, err := client(t).Resource(namespaces).Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := nsObj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["pod-security.kubernetes.io/enforce"] = "restricted"
	nsObj.SetLabels(labels)
	if _, err := client(t).Resource(namespaces).Update(context.Background(), nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string) []byte {
		return []byte(strings.NewReplacer("NAME", name, "NS", ns).Replace(restrictedPod))
	}
	// PodSecurity is on: a Pod that breaks "restricted" is refused here.
	if _, err := createPod(t, []byte(strings.Replace(string(pod("root")), "runAsNonRoot: true", "runAsNonRoot: false", 1)), true); err == nil {
		t.Fatal("a Pod that runs as root was admitted: PodSecurity admission is not enforcing")
	}
	configFile := writeFile(t, "config.yaml", []byte(defaultConfig))
	applyPolicy(t, configFile, pod("probe"))
	got, err := createPod(t, pod("app"), false)
	if err != nil {
		t.Fatalf("the injected Pod is refused: %v", err)
	}
	defer deletePod(t, pod("app"))
	u := unstructured.Unstructured{Object: got}
	if names, inits := containerNames(&u), initContainerNames(&u); strings.Join(names, ",") != "app" || strings.Join(inits, ",") != "envoy" {
		t.Errorf("containers %v, init containers %v, want app and the native sidecar envoy", names, inits)
	}
	if _, ok := annotation(got, naming.StatusAnnotation); !ok {
		t.Error("no status record")
	}
}

// seedTemplate is the seed's sidecar: Envoy reading its configuration from
// the ConfigMap envoy of the Pod's namespace. The embedded default
// references nothing; the tests of the reference gate use this one.
const seedTemplate = `containers:
- name: envoy
  image: envoyproxy/envoy:v1.40.0
  args: [--config-path, /etc/envoy/envoy.json]
  volumeMounts: [{name: envoy-conf, mountPath: /etc/envoy}]
volumes:
- name: envoy-conf
  configMap: {name: envoy}
`

func seedTemplateFile(t testing.TB) string { return writeFile(t, "seed.yaml", []byte(seedTemplate)) }
