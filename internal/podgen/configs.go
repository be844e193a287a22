package podgen

// Suite is one policy's config (a SidecarInjection) and the configs of
// other profiles whose build-time injections some of its Pods carry.
type Suite struct {
	Name   string
	Config string
	Others []string
}

// Suites are the policies the differential checks run, each with the
// profiles whose records its Pods may carry.
func Suites() []Suite {
	return []Suite{
		{Name: "default", Config: DefaultConfig, Others: []string{LogsConfig, TwinConfig}},
		{Name: "native-opt-in", Config: NativeOptInConfig, Others: []string{LogsConfig, TagConfig}},
		{Name: "metadata-init", Config: MetadataConfig, Others: []string{TagConfig, LogsConfig}},
		{Name: "two-sidecars", Config: TwoSidecarsConfig, Others: []string{LogsConfig}},
		{Name: "profile-mesh", Config: MeshProfileConfig, Others: []string{DefaultConfig, LogsConfig, TagConfig}},
		// Override annotations of two prefixes: the profile's, and a
		// whole key of another domain.
		{Name: "profile-logs", Config: LogsConfig, Others: []string{DefaultConfig, TwinConfig}},
	}
}

// The suites' configs.
const (
	// DefaultConfig is the embedded default template, opt-out.
	DefaultConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: envoy}
spec:
  mode: opt-out
`
	// NativeOptInConfig moves the default sidecar into native form, opt-in.
	NativeOptInConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: envoy}
spec:
  mode: opt-in
  native: true
`
	// MetadataConfig adds labels, annotations (one that needs escaping),
	// two init containers (one a native sidecar) and a volume.
	MetadataConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: mesh}
spec:
  namespaces: [default, ns-a]
  selector: tier!=db
  template:
    metadata:
      labels: {mesh: kinject}
      annotations:
        prometheus.io/scrape: "true"
        mesh.example/quoted: 'a "b" <c> & \d'
    initContainers:
    - name: mesh-init
      image: busybox
      command: [sh, -c, "true"]
    - name: proxy
      image: envoyproxy/envoy:v1.36.2
      restartPolicy: Always
      ports: [{containerPort: 15001}]
      resources: {requests: {cpu: 100m, memory: 64Mi}}
    volumes:
    - name: mesh-certs
      emptyDir: {}
`
	// TwoSidecarsConfig adds two classic sidecars and two volumes.
	TwoSidecarsConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: pair}
spec:
  image: registry.local/proxy:v2
  injectHostNetwork: true
  template:
    containers:
    - name: proxy
      image: envoyproxy/envoy:v1.36.2
      args: ["--log-level", "info"]
      ports: [{containerPort: 15000, protocol: TCP}, {containerPort: 15090, name: metrics}]
      env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
      volumeMounts: [{name: proxy-conf, mountPath: /etc/proxy}]
    - name: logger
      image: fluent/fluent-bit:3.0
      resources: {limits: {memory: 100Mi, cpu: "0.5"}}
    volumes:
    - name: proxy-conf
      configMap: {name: proxy, defaultMode: 420}
    - name: log-buffer
      emptyDir: {sizeLimit: 1Gi}
`
	// MeshProfileConfig is the embedded default as the profile "mesh".
	MeshProfileConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: mesh}
spec:
  profile: mesh
`
	// LogsConfig adds its own sidecar, volume and annotation, and a
	// volume named as two-sidecars' (a conflict between profiles).
	LogsConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: logs}
spec:
  profile: logs
  template:
    metadata:
      annotations: {logs.example/scrape: "true"}
    containers:
    - name: log-agent
      image: fluent/fluent-bit:3.0
      args: [--workers, "1"]
      ports: [{containerPort: 2020}]
      resources: {requests: {cpu: 10m}}
      volumeMounts: [{name: log-buffer, mountPath: /buffer}]
    volumes:
    - name: log-buffer
      emptyDir: {}
    parameters:
    - {annotation: workers, field: "containers[log-agent].args[--workers]", type: int}
    - {annotation: log-cpu, field: "containers[log-agent].resources.requests.cpu", type: quantity}
    - {annotation: example.com/log-image, field: "containers[log-agent].image", type: image}
`
	// TwinConfig adds a container named envoy, as the default profile does.
	TwinConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: twin}
spec:
  profile: twin
  template:
    containers:
    - name: envoy
      image: envoyproxy/envoy:v1.36.2
      ports: [{containerPort: 10001}]
`
	// TagConfig adds metadata-init's label and a native sidecar listening
	// on the port of metadata-init's proxy.
	TagConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: tag}
spec:
  profile: tag
  template:
    metadata:
      labels: {mesh: kinject, tagged: "yes"}
    initContainers:
    - name: tagger
      image: busybox
      restartPolicy: Always
      ports: [{containerPort: 15001}]
`
)

// ExpressionErrorTemplate is a template whose parameter's expression reads
// a field without a has() guard: it fails on a Pod whose first container
// has no ports (the core fails the object; at admission the Pod is left as
// created, with the error as a warning).
const ExpressionErrorTemplate = `containers:
- name: agent
  image: busybox
  env: [{name: PORT, value: "0"}]
parameters:
- annotation: port
  field: containers[agent].env[PORT].value
  type: int
  expression: object.spec.containers[0].ports[0].containerPort
`
