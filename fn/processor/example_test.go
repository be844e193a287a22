package processor_test

import (
	"os"
	"strings"

	"github.com/kinject/kubectl-inject/fn/processor"
)

// Run takes a ResourceList and writes it back with the sidecar added and
// one result per workload.
func ExampleRun() {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: web
  spec:
    containers:
    - name: web
      image: nginx
functionConfig:
  apiVersion: kinject.dev/v1alpha1
  kind: SidecarInjection
  metadata:
    name: proxy
  spec:
    template:
      containers:
      - name: proxy
        image: example.com/proxy:1
`
	if err := processor.Run(processor.Processor{}, strings.NewReader(in), os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// apiVersion: config.kubernetes.io/v1
	// kind: ResourceList
	// items:
	// - apiVersion: v1
	//   kind: Pod
	//   metadata:
	//     name: web
	//     annotations:
	//       kubectl.kubernetes.io/default-container: web
	//       sidecar.kinject.dev/status: '{"v":1,"template":"4b9a343b2f3050c49494","containers":["proxy"],"annotations":["kubectl.kubernetes.io/default-container"],"created":["metadata.annotations"]}'
	//   spec:
	//     containers:
	//     - name: web
	//       image: nginx
	//     - name: proxy
	//       image: example.com/proxy:1
	// functionConfig:
	//   apiVersion: kinject.dev/v1alpha1
	//   kind: SidecarInjection
	//   metadata:
	//     name: proxy
	//   spec:
	//     template:
	//       containers:
	//       - name: proxy
	//         image: example.com/proxy:1
	// results:
	// - message: injected proxy
	//   severity: info
	//   resourceRef:
	//     apiVersion: v1
	//     kind: Pod
	//     name: web
}
