package admission

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/plugin/cmd"
)

// explainRuns asks kubectl inject explain, against the installed policy,
// about every Pod the API server created (as it decoded them), in one
// run: the verdicts by Pod name.
func explainRuns(t *testing.T, in *inject.Injector, runs []podRun) map[string]cmd.Verdict {
	t.Helper()
	var docs [][]byte
	for _, r := range runs {
		if r.admitErr == nil {
			docs = append(docs, r.decoded)
		}
	}
	file := writeFile(t, "pods.yaml", bytes.Join(docs, []byte("\n---\n")))
	args := []string{"explain", "-f", file, "-o", "json"}
	if in.Profile() != "" {
		args = append(args, "--profile", in.Profile())
	}
	out, errOut, code := kubectlInject(t, args...)
	if code > 1 {
		t.Fatalf("explain: exit %d\n%s", code, errOut)
	}
	var list struct {
		Items []cmd.Verdict `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("explain -o json: %v\n%s", err, out)
	}
	byName := map[string]cmd.Verdict{}
	for _, v := range list.Items {
		byName[v.Namespace+"/"+strings.TrimPrefix(v.Object, "pod/")] = v
	}
	return byName
}

// agreeWithExplain holds explain's verdict on each Pod the API server
// created to what the API server did, and to what the test knows of the
// Pod: injected or not; the reason the policy wrote on a Pod it left
// alone; for a Pod left alone unmarked, the binding's reason (computed
// from the policy's settings and the Pod's namespace and labels), a
// record of the profile, or the opt-in mode's.
func agreeWithExplain(t *testing.T, in *inject.Injector, runs []podRun, verdicts map[string]cmd.Verdict, counts map[string]int) {
	t.Helper()
	for i, r := range runs {
		if r.admitErr != nil {
			continue
		}
		u := podFrom(t, r.decoded)
		v, ok := verdicts[u.GetNamespace()+"/"+u.GetName()]
		if !ok {
			t.Errorf("pod %d (%s): explain gave no verdict", i, u.GetName())
			continue
		}
		counts["explained"]++
		_, hadStatus := u.GetAnnotations()[in.StatusAnnotation()]
		_, injected := annotation(r.admitted, in.StatusAnnotation())
		injected = injected && !hadStatus
		mark, marked := annotation(r.admitted, naming.SkippedAnnotationFor(in.Profile()))
		var want string
		switch binding := bindingFacts(t, in, u.GetNamespace(), u.GetLabels()); {
		case injected:
		case marked:
			want, _ = admission.MarkReason(mark)
		case binding != "":
			want = binding
		case hadStatus:
			want = "already_injected"
		case in.Settings().Policy.Mode == inject.OptIn && !optedIn(in, u.GetAnnotations()):
			want = "not_opted_in"
		default:
			t.Errorf("pod %d (%s): the API server left it alone, unmarked, for no reason the test knows (explain: %s %s)", i, u.GetName(), v.Reason, v.Message)
			continue
		}
		if v.Injected != injected || string(v.Reason) != want {
			t.Errorf("pod %d (%s): explain says injected=%v %s (%s); the API server injected=%v, reason %q (core: %s %s)",
				i, u.GetName(), v.Injected, v.Reason, v.Message, injected, want, r.entry.Action, r.entry.Reason)
			continue
		}
		counts["explain-agrees"]++
	}
}

// bindingFacts says why the binding of the policy of in leaves a Pod out,
// from the settings the policy was compiled from and the namespace and
// labels of the Pod, in explain's reason codes: "" when it selects it.
// Every test namespace is enabled for every profile (ensureNamespace).
func bindingFacts(t *testing.T, in *inject.Injector, ns string, podLabels map[string]string) string {
	t.Helper()
	p := in.Settings().Policy
	switch {
	case contains(p.ExcludeNamespaces, ns):
		return "namespace_excluded"
	case len(p.Namespaces) > 0 && !contains(p.Namespaces, ns):
		return "namespace_not_selected"
	case len(p.Namespaces) == 0 && inject.IsSystemNamespace(ns):
		return "system_namespace"
	}
	if p.Selector != "" {
		sel, err := labels.Parse(p.Selector)
		if err != nil {
			t.Fatal(err)
		}
		if !sel.Matches(labels.Set(podLabels)) {
			return "labels_not_selected"
		}
	}
	return ""
}

// optedIn reports whether a Pod the opt-in mode reads opted in: the
// profile's inject annotation, or for the default profile the seed's, is
// "true".
func optedIn(in *inject.Injector, ann map[string]string) bool {
	if strings.EqualFold(ann[naming.InjectAnnotationFor(in.Profile())], "true") {
		return true
	}
	return in.Profile() == "" && strings.EqualFold(ann[naming.SeedAnnotation], "true")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
