package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/template"

	"github.com/kinject/kubectl-inject/pkg/config"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/staticdir"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// installedPolicy is the mutating policy kubectl inject policy --apply
// installs for a config (a SidecarInjection), under name.
func installedPolicy(t *testing.T, config, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(policyObjects(t, config, name)[0]); err != nil {
		t.Fatal(err)
	}
	return u
}

// policyObjects are the objects kubectl inject policy compiles for a
// config (a SidecarInjection) under name: the mutating policy first.
func policyObjects(t *testing.T, config, name string) [][]byte {
	t.Helper()
	cfg, err := inject.ParseConfig([]byte(config), nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := cfg.Template
	if tmpl == nil {
		tmpl = inject.DefaultTemplate()
	}
	in, err := inject.New(tmpl, cfg.Settings)
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.Compile(in, name)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := p.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// policyClient is a dynamic client serving the policies; listErr, when
// set, is what listing them answers.
func policyClient(listErr error, policies ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	gvr := policyResource(admission.KindMutatingPolicy)
	objs := make([]runtime.Object, len(policies))
	for i, p := range policies {
		objs[i] = p
	}
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "MutatingAdmissionPolicyList"}, objs...)
	if listErr != nil {
		c.PrependReactor("list", gvr.Resource, func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, listErr })
	}
	return c
}

const (
	selectingConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: envoy}
spec:
  image: example.com/envoy:v2
  namespaces: [shop]
  excludeNamespaces: [shop-test]
  kinds: [Pod, Deployment]
  apiGroups: [apps, core]
  selector: tier!=db
`
	otherImageConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: envoy}
spec:
  image: example.com/envoy:v3
`
	meshConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: mesh}
spec:
  profile: mesh
  image: example.com/mesh:v1
`
)

// TestReadCurrent: what status, restart and check take as current, from
// the flags, the profile's one installed policy (its selection of Pods
// left out unless whole) or the embedded default; two policies of the
// profile, or a list that fails, are an error when strict and otherwise a
// warning with the default standing.
func TestReadCurrent(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}, "", errors.New("no RBAC"))
	for _, c := range []struct {
		name          string
		listErr       error
		policies      []string // config, name pairs
		policyName    string   // check's --name
		profile       string
		templateFlag  bool
		strict, whole bool
		// What is current: the source, the image; the selection kept.
		source, image string
		selection     bool
		warning, err  string
	}{{
		name:   "nothing installed: the embedded default",
		source: "the embedded default", image: "envoyproxy/envoy:",
	}, {
		name:   "the API server serves no policies",
		source: "the embedded default", image: "envoyproxy/envoy:",
		listErr: apierrors.NewNotFound(schema.GroupResource{Resource: "mutatingadmissionpolicies"}, ""),
	}, {
		name:     "the profile's policy, its selection left out",
		policies: []string{selectingConfig, "envoy"},
		source:   "mutatingadmissionpolicy/kinject-envoy", image: "example.com/envoy:v2",
	}, {
		name:     "the profile's policy whole (check)",
		policies: []string{selectingConfig, "envoy"}, whole: true,
		source: "mutatingadmissionpolicy/kinject-envoy", image: "example.com/envoy:v2", selection: true,
	}, {
		name:     "another profile's policy is not current",
		policies: []string{meshConfig, "mesh"},
		source:   "the embedded default", image: "envoyproxy/envoy:",
	}, {
		name:     "the other profile's policy",
		policies: []string{meshConfig, "mesh", selectingConfig, "envoy"}, profile: "mesh",
		source: "mutatingadmissionpolicy/kinject-mesh-mesh", image: "example.com/mesh:v1",
	}, {
		name:     "the template flags win over the policy",
		policies: []string{selectingConfig, "envoy"}, templateFlag: true,
		source: "the template flags", image: "example.com/flag:v1",
	}, {
		name:     "two policies of the profile disagree: a warning",
		policies: []string{selectingConfig, "envoy", otherImageConfig, "canary"},
		source:   "the embedded default", image: "envoyproxy/envoy:",
		warning: "2 policies are installed for the default profile (mutatingadmissionpolicy/kinject-canary, mutatingadmissionpolicy/kinject-envoy): " +
			"they disagree on what current is; current is the embedded default",
	}, {
		name:     "two policies of the profile disagree: strict",
		policies: []string{selectingConfig, "envoy", otherImageConfig, "canary"}, strict: true,
		err: "2 policies are installed for the default profile (mutatingadmissionpolicy/kinject-canary, mutatingadmissionpolicy/kinject-envoy): " +
			"they disagree on what current is (give --template to say what current is)",
	}, {
		name:     "one of them named",
		policies: []string{selectingConfig, "envoy", otherImageConfig, "canary"}, policyName: "kinject-canary",
		source: "mutatingadmissionpolicy/kinject-canary", image: "example.com/envoy:v3",
	}, {
		name:    "a list that fails: a warning",
		listErr: forbidden,
		source:  "the embedded default", image: "envoyproxy/envoy:",
		warning: "cannot read the installed admission policies: ",
	}, {
		name:    "a list that fails: strict",
		listErr: forbidden, strict: true,
		err: "cannot read the installed admission policies: ",
	}} {
		t.Run(c.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			for i := 0; i < len(c.policies); i += 2 {
				objs = append(objs, installedPolicy(t, c.policies[i], c.policies[i+1]))
			}
			flags := config.NewFlags()
			flags.Profile = c.profile
			if c.templateFlag {
				flags.TemplateFile = writeTemplateFile(t, "containers:\n- {name: proxy, image: example.com/flag:v1}\n")
			}
			var warnings []string
			got, err := readCurrent(context.Background(), &flags, policyClient(c.listErr, objs...), nil, nil, c.policyName, c.strict, c.whole,
				func(w string) { warnings = append(warnings, w) })
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), strings.TrimSuffix(c.err, " ")) {
					t.Fatalf("error = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.warning == "" && len(warnings) > 0:
				t.Errorf("warnings %q, want none", warnings)
			case c.warning != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], c.warning)):
				t.Errorf("warnings %q, want one starting %q", warnings, c.warning)
			case c.warning != "" && !strings.HasSuffix(warnings[0], "; current is the embedded default"):
				t.Errorf("warning %q does not say the default stands", warnings[0])
			}
			if got.Source != c.source {
				t.Errorf("source %q, want %q", got.Source, c.source)
			}
			image := got.Settings.Image // what replaces the first sidecar's image
			if image == "" {
				image = templateImage(t, got.Template)
			}
			if !strings.HasPrefix(image, c.image) {
				t.Errorf("image %q, want %q", image, c.image)
			}
			sel := got.Settings.Policy
			kept := len(sel.Namespaces)+len(sel.ExcludeNamespaces)+len(sel.Kinds)+len(sel.APIGroups) > 0 || sel.Selector != ""
			if kept != c.selection {
				t.Errorf("selection %+v, want it kept: %v", sel, c.selection)
			}
			if c.selection && (strings.Join(sel.Namespaces, ",") != "shop" || strings.Join(sel.ExcludeNamespaces, ",") != "shop-test" ||
				strings.Join(sel.Kinds, ",") != "Pod,Deployment" || strings.Join(sel.APIGroups, ",") != "apps,core" || sel.Selector != "tier!=db") {
				t.Errorf("selection %+v, want the policy's", sel)
			}
		})
	}
}

// templateImage is the image of the template's first sidecar, classic or
// native.
func templateImage(t *testing.T, tmpl *template.Template) string {
	t.Helper()
	for _, n := range append(append([]*yaml.Node(nil), tmpl.Containers...), tmpl.InitContainers...) {
		image, err := yaml.NewRNode(n).GetString("image")
		if err != nil {
			t.Fatal(err)
		}
		return image
	}
	t.Fatal("the template adds no container")
	return ""
}

func writeTemplateFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadCurrentStatic: with --static DIR, the policy of the static
// manifests there is current once the API server's metrics say it runs
// them (the source line says so), before an API policy that agrees; a
// server that runs other files is a warning, the default standing.
// Without --static, a server that runs static policies the API does not
// list is a warning naming --static; one whose metrics cannot be read
// says nothing.
func TestReadCurrentStatic(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runCmd(t, "", "policy", "--static", dir); code != 0 {
		t.Fatalf("policy --static: exit %d: %s", code, stderr)
	}
	hash, err := staticdir.Hash(filepath.Join(dir, admission.StaticMutatingDir))
	if err != nil {
		t.Fatal(err)
	}
	serving := func(hash string) metricsReader {
		return func(context.Context) ([]byte, error) {
			return []byte("# TYPE x gauge\n" + staticConfigMetric + `{hash="` + hash + `",plugin="MutatingAdmissionPolicy"} 1` + "\n"), nil
		}
	}
	unreadable := func(context.Context) ([]byte, error) { return nil, errors.New("forbidden") }
	file := filepath.Join(dir, admission.StaticMutatingDir, "kinject-envoy.policy.yaml")
	api := installedPolicy(t, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec: {}\n", "envoy")
	for _, c := range []struct {
		name    string
		static  string
		metrics metricsReader
		api     bool
		source  string
		warning string
	}{
		{"served", dir, serving(hash), false, "static manifest " + file + "; the API server runs them: " + hash, ""},
		{"served, before the API's", dir, serving(hash), true, "static manifest " + file + "; the API server runs them: " + hash, ""},
		{"no metrics reader", dir, nil, false, "static manifest " + file, ""},
		{"other files served", dir, serving("0123abcd"), false, "the embedded default",
			"the API server runs other static manifests (0123abcd) than " + filepath.Join(dir, admission.StaticMutatingDir) + " holds (" + hash + ")"},
		{"none served", dir, serving(""), false, "the embedded default", "the API server runs no static mutating admission policy"},
		{"served, no --static", "", serving(hash), false, "the embedded default",
			"the API server runs static mutating admission policies (" + hash + "), which the API does not list: give --static DIR"},
		{"metrics unreadable, no --static", "", unreadable, false, "the embedded default", ""},
		{"the API's, no --static", "", serving(hash), true, "mutatingadmissionpolicy/kinject-envoy", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			flags := config.NewFlags()
			flags.StaticDir = c.static
			var objs []*unstructured.Unstructured
			if c.api {
				objs = append(objs, api)
			}
			var warnings []string
			got, err := readCurrent(context.Background(), &flags, policyClient(nil, objs...), c.metrics, nil, "", false, false,
				func(w string) { warnings = append(warnings, w) })
			if err != nil {
				t.Fatal(err)
			}
			if got.Source != c.source {
				t.Errorf("source %q, want %q", got.Source, c.source)
			}
			if c.warning == "" && len(warnings) > 0 || c.warning != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], c.warning)) {
				t.Errorf("warnings %q, want %q", warnings, c.warning)
			}
		})
	}
}
