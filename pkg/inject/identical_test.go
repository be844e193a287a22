package inject_test

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestIdenticalAsTheClusterStoresIt: a container or volume of the
// template's name is the template's when it holds every field the
// template sets, as the API server stores a Pod (defaulted, quantities
// canonical) and the admission policy compares it; anything else is a
// conflict.
func TestIdenticalAsTheClusterStoresIt(t *testing.T) {
	cfg, err := inject.ParseConfig([]byte(`containers:
- name: proxy
  image: proxy:1
  args: [--port, "15000"]
  ports: [{containerPort: 15000}]
  resources: {limits: {cpu: 1000m, memory: 1Gi}}
volumes:
- name: scratch
  emptyDir: {}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(cfg.Template, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	const pod = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: app, image: app}
  - PROXY
  volumes:
  - VOLUME
`
	same := `{name: proxy, image: proxy:1, args: [--port, "15000"], ports: [{containerPort: 15000}], resources: {limits: {cpu: 1000m, memory: 1Gi}}}`
	sameVolume := `{name: scratch, emptyDir: {}}`
	for _, c := range []struct {
		name, proxy, volume string
		identical           bool
	}{
		{"as written", same, sameVolume, true},
		{"quantities canonical", `{name: proxy, image: proxy:1, args: [--port, "15000"], ports: [{containerPort: 15000}], resources: {limits: {cpu: "1", memory: 1024Mi}}}`, sameVolume, true},
		{"defaulted by the API server", `{name: proxy, image: proxy:1, args: [--port, "15000"], ports: [{containerPort: 15000, protocol: TCP}], resources: {limits: {cpu: "1", memory: 1Gi}}, imagePullPolicy: IfNotPresent, terminationMessagePath: /dev/termination-log}`, `{name: scratch, emptyDir: {medium: ""}}`, true},
		{"another image", `{name: proxy, image: proxy:2, args: [--port, "15000"], ports: [{containerPort: 15000}], resources: {limits: {cpu: 1000m, memory: 1Gi}}}`, sameVolume, false},
		{"another quantity", `{name: proxy, image: proxy:1, args: [--port, "15000"], ports: [{containerPort: 15000}], resources: {limits: {cpu: 999m, memory: 1Gi}}}`, sameVolume, false},
		{"words in another order", `{name: proxy, image: proxy:1, args: ["15000", --port], ports: [{containerPort: 15000}], resources: {limits: {cpu: 1000m, memory: 1Gi}}}`, sameVolume, false},
		{"a port more", `{name: proxy, image: proxy:1, args: [--port, "15000"], ports: [{containerPort: 15000}, {containerPort: 1}], resources: {limits: {cpu: 1000m, memory: 1Gi}}}`, sameVolume, false},
		{"a field unset", `{name: proxy, image: proxy:1, args: [--port, "15000"], ports: [{containerPort: 15000}]}`, sameVolume, false},
		{"a volume of another kind", same, `{name: scratch, configMap: {name: x}}`, false},
	} {
		doc := strings.NewReplacer("PROXY", c.proxy, "VOLUME", c.volume).Replace(pod)
		_, entries := in.ProcessText(inject.OpInject, []byte(doc), 0)
		if len(entries) != 1 {
			t.Fatalf("%s: %d entries", c.name, len(entries))
		}
		e := entries[0]
		switch {
		case c.identical && e.Action != inject.Injected:
			t.Errorf("%s: %s %s, want injected (the pod's proxy and scratch taken as the template's)", c.name, e.Action, e.Message)
		case !c.identical && (e.Action != inject.Failed || e.Reason != inject.ReasonConflict):
			t.Errorf("%s: %s %s, want a conflict", c.name, e.Action, e.Message)
		}
	}
}
