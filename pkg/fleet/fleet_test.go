package fleet_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// injected returns manifest injected by in, as an object.
func injected(t *testing.T, in *inject.Injector, manifest string) *unstructured.Unstructured {
	t.Helper()
	n, err := yaml.Parse(manifest)
	if err != nil {
		t.Fatal(err)
	}
	in.ProcessNode(inject.OpInject, n, 0)
	return object(t, n.MustString())
}

const deploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: ns, uid: uid-NAME}
spec:
  template:
    metadata: {labels: {app: NAME}}
    spec:
      containers: [{name: app, image: nginx}]
`

func TestBuild(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	web := injected(t, in, strings.ReplaceAll(deploy, "NAME", "web"))
	plain := object(t, strings.ReplaceAll(deploy, "NAME", "plain"))
	rs := object(t, `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-1
  namespace: ns
  uid: uid-rs
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: uid-web, controller: true}]
spec: {template: {spec: {containers: [{name: app, image: nginx}]}}}
`)
	oldPod := object(t, `apiVersion: v1
kind: Pod
metadata:
  name: web-1-a
  namespace: ns
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, uid: uid-rs, controller: true}]
spec: {containers: [{name: app, image: nginx}]}
`)
	bare := object(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: bare, namespace: ns}\nspec: {containers: [{name: app, image: nginx}]}\n")
	rows := fleet.Build(in, []*unstructured.Unstructured{plain, web, rs, oldPod, bare})
	var got []string
	for _, r := range rows {
		got = append(got, r.Ref()+" "+r.State)
	}
	want := "deployment.apps/web current\ndeployment.apps/plain not-injected\npod/bare not-injected"
	if strings.Join(got, "\n") != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if rows[0].Pods != 1 || rows[0].PodsBehind != 1 || !strings.Contains(rows[0].Restart, "rollout restart deployment.apps/web -n ns") {
		t.Errorf("web: %+v", rows[0])
	}
	if !rows[2].Bare {
		t.Errorf("bare pod not marked bare: %+v", rows[2])
	}
}
