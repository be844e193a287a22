package inject_test

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

const exampleDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # comments stay
spec:
  template:
    spec:
      containers:
      - name: web
        image: "nginx:1.27"
`

// Inject a small sidecar into a Deployment's text: only lines are added.
func ExampleInjector_ProcessText() {
	tpl, err := inject.ParseTemplate([]byte(`
containers:
- name: proxy
  image: example/proxy:1.0
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	in, err := inject.New(tpl, inject.Settings{})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, entries := in.ProcessText(inject.OpInject, []byte(exampleDeployment), 0)
	fmt.Print(string(out))
	fmt.Println(entries[0])
	// Output:
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata:
	//   name: web # comments stay
	// spec:
	//   template:
	//     metadata:
	//       annotations:
	//         kubectl.kubernetes.io/default-container: web
	//         sidecar.kinject.dev/status: '{"v":1,"template":"7db727e1082bfa344ab4","containers":["proxy"],"annotations":["kubectl.kubernetes.io/default-container"],"created":["metadata","metadata.annotations"]}'
	//     spec:
	//       containers:
	//       - name: web
	//         image: "nginx:1.27"
	//       - name: proxy
	//         image: example/proxy:1.0
	// Deployment web (document 0): injected
}

// Uninject restores the document byte for byte from the status record.
func ExampleInjector_ProcessText_uninject() {
	in, _ := inject.New(inject.DefaultTemplate(), inject.Settings{})
	injected, _ := in.ProcessText(inject.OpInject, []byte(exampleDeployment), 0)
	restored, entries := in.ProcessText(inject.OpUninject, injected, 0)
	fmt.Println(string(restored) == exampleDeployment, entries[0].Action)
	// Output: true uninjected
}

// Skips are data: the report says why an object was left alone.
func ExampleInjector_ProcessNode() {
	in, _ := inject.New(inject.DefaultTemplate(), inject.Settings{Policy: inject.Policy{Mode: inject.OptIn}})
	doc := yaml.MustParse(exampleDeployment)
	entries := in.ProcessNode(inject.OpInject, doc, 0)
	fmt.Println(entries[0].Action, entries[0].Reason)
	// Output: skipped not_opted_in
}

// The seed Initializer's ConfigMap works unchanged as a template.
func ExampleLoadConfig() {
	cfg, err := inject.ParseConfig([]byte(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: envoy-initializer
data:
  config: |
    containers:
      - name: envoy
        image: lyft/envoy:845747db88f102c0fd262ab234308e9e22f693a1
    volumes:
      - name: envoy-conf
        configMap:
          name: envoy
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Template.Names())
	// Output: [envoy envoy-conf]
}
