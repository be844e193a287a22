package live

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestRetriesOnConflict: a patch refused with Conflict is computed again
// from a fresh read, up to Retries attempts, and then given up with the
// count.
func TestRetriesOnConflict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		conflicts int
		action    inject.Action
		message   string
	}{
		{"no conflict", 0, inject.Injected, ""},
		{"two conflicts", 2, inject.Injected, ""},
		{"conflicts every time", 99, inject.Failed, "gave up after 3 attempts, the object keeps changing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "default"},
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
					"containers": []any{map[string]any{"name": "app", "image": "busybox", "ports": []any{map[string]any{"containerPort": int64(8080)}}}},
				}}},
			}}
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "DeploymentList"}, obj.DeepCopy())
			patches, gets := 0, 0
			client.PrependReactor("patch", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
				if patches++; patches <= c.conflicts {
					return true, nil, apierrors.NewConflict(gvr.GroupResource(), "web", nil)
				}
				return true, obj.DeepCopy(), nil // the fake cannot apply a strategic merge patch
			})
			client.PrependReactor("get", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
				gets++
				return false, nil, nil
			})
			in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
			if err != nil {
				t.Fatal(err)
			}
			p := &Patcher{Injector: in, Op: inject.OpInject, Client: client, Retries: 3, FieldManager: "test"}
			mapping := &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvr.GroupVersion().WithKind("Deployment"), Scope: meta.RESTScopeNamespace}
			res := p.Process(context.Background(), Target{Mapping: mapping, Namespace: "default", Name: "web", Object: obj})
			message := ""
			if res.Err != nil {
				message = res.Err.Error()
			}
			if res.Action != c.action || !strings.HasPrefix(message, c.message) || (c.message == "") != (res.Err == nil) {
				t.Fatalf("%s %v, want %s %q", res.Action, res.Err, c.action, c.message)
			}
			if attempts := min(c.conflicts+1, 3); patches != attempts || gets != attempts-1 {
				t.Errorf("%d patches and %d reads, want %d and %d", patches, gets, attempts, attempts-1)
			}
		})
	}
}
