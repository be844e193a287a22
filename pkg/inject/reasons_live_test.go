package inject_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
)

// reasonsConfigMap is a sidecar whose volume needs a ConfigMap, for the
// reason the live commands give when a namespace lacks it.
const reasonsConfigMap = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: proxy}
spec:
  template:
    containers:
    - {name: proxy, image: example.com/proxy:v1}
    volumes:
    - name: proxy-conf
      configMap: {name: proxy-conf}
`

// reasonsNative is a native sidecar, which the core injects into a Job.
const reasonsNative = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: proxy}
spec:
  native: true
  template:
    containers:
    - {name: proxy, image: example.com/proxy:v1}
`

// liveReasonCase is an object in a cluster (a fake one) that the live
// commands' patcher fails with a reason the core never gives.
type liveReasonCase struct {
	name    string
	config  string
	object  string
	reason  inject.Reason
	message string
}

var liveReasonCases = []liveReasonCase{{
	name: "a Pod without a controller", config: podgen.ReasonsProxy,
	object: pod("namespace: ns-a", appContainer),
	reason: inject.ReasonBarePod,
	message: "containers cannot be added to or removed from an existing Pod (a Pod's containers are fixed once it is created) and this Pod has no controller to inject instead; " +
		"inject the manifest that creates it, or pass --recreate to delete the Pod and create it again with the change",
}, {
	name: "a Job", config: reasonsNative,
	object: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: once, namespace: ns-a}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n" + templateContainer,
	reason: inject.ReasonImmutableTemplate,
	message: "a Job's pod template cannot be changed after the Job is created; " +
		"inject its manifest with --local and create the Job again, or inject the CronJob that creates it",
}, {
	name: "a Pod whose ReplicaSet is gone", config: podgen.ReasonsProxy,
	object:  pod("namespace: ns-a, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]", appContainer),
	reason:  inject.ReasonOwnerNotFound,
	message: `pod/p is owned by replicaset.apps/web-abc: get: replicasets.apps "web-abc" not found`,
}, {
	name: "a ConfigMap the namespace lacks", config: reasonsConfigMap,
	object:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns-a}\nspec:\n  template:\n    spec:\n" + templateContainer,
	reason:  inject.ReasonMissingReference,
	message: `the sidecar needs configmap/proxy-conf (volumes[proxy-conf].configMap.name), and namespace "ns-a" has none: its Pods would never start, so nothing was sent; create it there, or pass --allow-missing-references`,
}}

// liveResources are the kinds liveReasonCases hold, and the ReplicaSet a
// Pod's owner reference names.
var liveResources = map[schema.GroupVersionKind]string{
	{Version: "v1", Kind: "Pod"}:                       "pods",
	{Group: "batch", Version: "v1", Kind: "Job"}:       "jobs",
	{Group: "apps", Version: "v1", Kind: "Deployment"}: "deployments",
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}: "replicasets",
	{Version: "v1", Kind: "ConfigMap"}:                 "configmaps",
}

// TestLiveReasons holds the live commands' patcher, run against a fake
// cluster that holds the case's object alone, to each case's written-out
// reason and message.
func TestLiveReasons(t *testing.T) {
	t.Parallel()
	for _, c := range liveReasonCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var obj unstructured.Unstructured
			if err := sigsyaml.Unmarshal([]byte(c.object), &obj.Object); err != nil {
				t.Fatal(err)
			}
			mapper := meta.NewDefaultRESTMapper(nil)
			lists := map[schema.GroupVersionResource]string{}
			for gvk, resource := range liveResources {
				mapper.AddSpecific(gvk, gvk.GroupVersion().WithResource(resource), gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), meta.RESTScopeNamespace)
				lists[gvk.GroupVersion().WithResource(resource)] = gvk.Kind + "List"
			}
			mapping, err := mapper.RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
			if err != nil {
				t.Fatal(err)
			}
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, obj.DeepCopy())
			p := &live.Patcher{
				Injector: reasonsInjector(t, c.config), Op: inject.OpInject, Client: client, Mapper: mapper,
				References: &live.ReferenceChecker{Client: client}, FieldManager: "test",
			}
			res := p.Process(context.Background(), live.Target{Mapping: mapping, Namespace: obj.GetNamespace(), Name: obj.GetName()})
			if res.Action != inject.Failed || res.Reason != c.reason || res.Message != c.message {
				t.Errorf("got %s %s\n%q\nwant %s %s\n%q", res.Action, res.Reason, res.Message, inject.Failed, c.reason, c.message)
			}
			for _, a := range client.Actions() {
				if verb := a.GetVerb(); verb != "get" {
					t.Errorf("a %s of %s was sent for an object that fails", verb, a.GetResource().Resource)
				}
			}
		})
	}
}

// clusterReasonCase is a reason whose absolute case needs a cluster: the
// test (a function of a file) that asserts the result line's "ACTION:
// REASON".
type clusterReasonCase struct {
	reason     inject.Reason
	action     inject.Action
	file, test string
}

// text is what the case's test asserts.
func (c clusterReasonCase) text() string { return string(c.action) + ": " + string(c.reason) }

// clusterReasonCases: system_namespace is given by the plugin's selection
// of targets (plugin/cmd), before a patcher runs, from the objects a
// cluster lists.
var clusterReasonCases = []clusterReasonCase{{
	reason: inject.ReasonSystemNamespace, action: inject.Skipped,
	file: "../../test/live/safety_test.go", test: "TestSystemNamespacesLeftOut",
}}

// clusterCaseFound reports whether c's test exists and holds a string
// literal with c's text.
func clusterCaseFound(t *testing.T, c clusterReasonCase) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), c.file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != c.test {
			continue
		}
		found := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(lit.Value, c.text()) {
				found = true
			}
			return !found
		})
		return found
	}
	return false
}
