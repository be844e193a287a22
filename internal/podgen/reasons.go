package podgen

// The configs of the tests of every skip reason and conflict kind
// (TestReasons in pkg/inject and in pkg/admission): written out here, not
// taken from the embedded default or the corpus, so that a rule the core
// and the admission policy both read cannot change together with the
// tests' input. Each test writes out its own expectations.
const (
	// ReasonsProxy adds a sidecar with a port, a reserved port, a volume,
	// a label and two parameters (a port with an expression, a quantity),
	// opt-out, in every namespace but kube-public and ns-excluded.
	ReasonsProxy = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: proxy}
spec:
  excludeNamespaces: [ns-excluded]
  template:
    metadata:
      labels: {mesh: proxy}
    containers:
    - name: proxy
      image: example.com/proxy:v1
      ports: [{containerPort: 15000}]
      env: [{name: APP_PORT, value: "8080"}]
      resources: {requests: {cpu: 10m}}
    volumes:
    - name: proxy-conf
      emptyDir: {}
    reservedPorts:
    - {port: 15001, container: proxy, description: outbound capture}
    parameters:
    - annotation: app-port
      field: containers[proxy].env[APP_PORT].value
      type: port
      expression: "has(object.spec.containers[0].ports) ? object.spec.containers[0].ports[0].containerPort : null"
    - {annotation: cpu, field: "containers[proxy].resources.requests.cpu", type: quantity}
`
	// ReasonsOptIn is the same sidecar, opt-in, for the namespaces ns-a and
	// ns-b only, and the Pods labelled tier!=db.
	ReasonsOptIn = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: proxy}
spec:
  mode: opt-in
  namespaces: [ns-a, ns-b]
  selector: tier!=db
  kinds: [Pod, Deployment]
  template:
    containers:
    - name: proxy
      image: example.com/proxy:v1
`
	// The profiles whose injections a Pod carries before podgen.ReasonsProxy's,
	// each adding one thing podgen.ReasonsProxy adds too.
	ReasonsOtherContainer = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: other}
spec:
  profile: other
  template:
    containers:
    - {name: proxy, image: example.com/other:v1}
`
	ReasonsOtherVolume = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: other}
spec:
  profile: other
  template:
    containers:
    - {name: other, image: example.com/other:v1}
    volumes:
    - {name: proxy-conf, emptyDir: {}}
`
	ReasonsOtherPort = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: other}
spec:
  profile: other
  template:
    containers:
    - {name: other, image: example.com/other:v1, ports: [{containerPort: 15000}]}
`
	ReasonsOtherLabel = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: other}
spec:
  profile: other
  template:
    metadata:
      labels: {mesh: other}
    containers:
    - {name: other, image: example.com/other:v1}
`
)
