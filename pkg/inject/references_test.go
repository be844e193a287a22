package inject_test

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

const referencingTemplate = `containers:
- name: agent
  image: agent:1
  envFrom:
  - configMapRef: {name: agent-env}
  - secretRef: {name: agent-creds, optional: true}
  env:
  - name: TOKEN
    valueFrom: {secretKeyRef: {name: agent-token, key: token}}
  - name: LEVEL
    valueFrom: {configMapKeyRef: {name: agent-env, key: level}}
initContainers:
- name: setup
  image: setup:1
  env:
  - name: X
    valueFrom: {configMapKeyRef: {name: optional-cm, key: x, optional: true}}
volumes:
- name: conf
  configMap: {name: agent-conf}
- name: certs
  secret: {secretName: agent-certs}
- name: data
  persistentVolumeClaim: {claimName: agent-data}
- name: maybe
  configMap: {name: maybe, optional: true}
- name: bundle
  projected:
    sources:
    - configMap: {name: bundle-cm}
    - secret: {name: bundle-secret, optional: true}
- name: scratch
  emptyDir: {}
`

func TestTemplateReferences(t *testing.T) {
	t.Parallel()
	tmpl, err := inject.ParseTemplate([]byte(referencingTemplate))
	if err != nil {
		t.Fatal(err)
	}
	want := []template.Reference{
		{Kind: "ConfigMap", Name: "agent-conf", Field: "volumes[conf].configMap.name"},
		{Kind: "ConfigMap", Name: "agent-env", Field: "containers[agent].envFrom[0].configMapRef.name"},
		{Kind: "ConfigMap", Name: "bundle-cm", Field: "volumes[bundle].projected.sources[0].configMap.name"},
		{Kind: "PersistentVolumeClaim", Name: "agent-data", Field: "volumes[data].persistentVolumeClaim.claimName"},
		{Kind: "Secret", Name: "agent-certs", Field: "volumes[certs].secret.secretName"},
		{Kind: "Secret", Name: "agent-token", Field: "containers[agent].env[TOKEN].valueFrom.secretKeyRef.name"},
	}
	if got := tmpl.References(); !reflect.DeepEqual(got, want) {
		t.Errorf("References:\n got %+v\nwant %+v", got, want)
	}
	if got := inject.DefaultTemplate().References(); len(got) != 0 {
		t.Errorf("the embedded default carries its configuration and needs no object, got %+v", got)
	}
}

func TestInjectedReferences(t *testing.T) {
	t.Parallel()
	tmpl, err := inject.ParseTemplate([]byte(referencingTemplate))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tmpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	// The app's own volume references a ConfigMap too: it is not the
	// sidecar's, so it is not listed.
	src := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1
      volumes:
      - name: app-conf
        configMap: {name: app-conf}
`
	obj, err := yaml.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.InjectedReferences(obj); len(got) != 0 {
		t.Errorf("before injection: %+v, want none", got)
	}
	if entries := in.ProcessNode(inject.OpInject, obj, 0); entries[0].Action != inject.Injected {
		t.Fatalf("inject: %+v", entries[0])
	}
	got := in.InjectedReferences(obj)
	if !reflect.DeepEqual(got, tmpl.References()) {
		t.Errorf("after injection:\n got %+v\nwant %+v", got, tmpl.References())
	}
}

func TestNamespaceSettings(t *testing.T) {
	t.Parallel()
	deploy := func(ns string) *yaml.RNode {
		obj, err := yaml.Parse("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: " + ns + "}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: app, image: app:1}\n")
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	for _, tc := range []struct {
		name   string
		policy inject.Policy
		ns     string
		want   inject.Reason
	}{
		{"excluded", inject.Policy{ExcludeNamespaces: []string{"legacy"}}, "legacy", inject.ReasonNamespaceNotSelect},
		{"not excluded", inject.Policy{ExcludeNamespaces: []string{"legacy"}}, "shop", ""},
		{"named and excluded", inject.Policy{Namespaces: []string{"shop"}, ExcludeNamespaces: []string{"shop"}}, "shop", inject.ReasonNamespaceNotSelect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			e := in.ProcessNode(inject.OpInject, deploy(tc.ns), 0)[0]
			if e.Reason != tc.want {
				t.Errorf("reason %q, want %q (%s)", e.Reason, tc.want, e.Message)
			}
		})
	}
	for _, bad := range []inject.Policy{{Namespaces: []string{"!kube-system"}}, {ExcludeNamespaces: []string{"Shop"}}} {
		_, err := inject.New(inject.DefaultTemplate(), inject.Settings{Policy: bad})
		if err == nil || !strings.Contains(err.Error(), "is not a valid name") {
			t.Errorf("%+v: got %v, want a namespace name error", bad, err)
		}
	}
	s, err := inject.DecodeSettings(inject.FlatSettings([][2]string{{"excludeNamespaces", "a, b"}}), "data")
	if err != nil || !reflect.DeepEqual(s.Policy.ExcludeNamespaces, []string{"a", "b"}) {
		t.Errorf("excludeNamespaces: %v %v", err, s.Policy.ExcludeNamespaces)
	}
}
