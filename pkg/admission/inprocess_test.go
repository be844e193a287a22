package admission_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// podsPerSuite is how many generated Pods each suite creates in-process.
const podsPerSuite = 80

// TestInProcess creates every Pod of the generated suites and of the
// golden corpus under the compiled policy, with the API server's own
// admission machinery, and compares the Pod admitted with the core's
// injection of the same manifest, field for field: the policy must inject
// exactly the Pods the core injects, as the core does, and warn with the
// core's message about every Pod the core refuses.
func TestInProcess(t *testing.T) {
	start := time.Now()
	var suites []inProcessSuite
	for i, s := range podgen.Suites() {
		g, err := podgen.For(s.Config, s.Others...)
		if err != nil {
			t.Fatal(err)
		}
		suites = append(suites, inProcessSuite{name: s.Name, config: s.Config, pods: g.Pods(int64(i+1), podsPerSuite, "gen-"+s.Name), generated: podsPerSuite})
	}
	corpus, err := podgen.CorpusPods("../inject/testdata/golden")
	if err != nil {
		t.Fatal(err)
	}
	suites[0].pods = append(suites[0].pods, corpus...)
	configs, _ := filepath.Glob("../inject/testdata/golden/*/config.yaml")
	uncompiled := map[string]string{}
	for _, config := range configs {
		data, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		in, err := podgen.Injector(string(data))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admission.Compile(in, ""); err != nil {
			uncompiled[filepath.Base(filepath.Dir(config))] = err.Error()
			continue
		}
		pods, err := podgen.CasePods(filepath.Dir(config))
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) > 0 {
			suites = append(suites, inProcessSuite{name: "corpus-" + filepath.Base(filepath.Dir(config)), config: string(data), pods: pods})
		}
	}
	checkUncompiled(t, uncompiled)
	wantPods := 0 // every Pod of every suite, counted before any runs
	for _, s := range suites {
		wantPods += len(s.pods)
	}
	total, excluded, predicted := outcomes{}, outcomes{}, outcomes{}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			o, x, p := s.run(t)
			for k, n := range o {
				total[k] += n
			}
			for k, n := range x {
				excluded[k] += n
			}
			for k, n := range p {
				predicted[k] += n
			}
		})
	}
	elapsed := time.Since(start)
	t.Logf("%d Pods in %v: %v", total["pods"], elapsed.Round(time.Millisecond), total)
	// Every Pod the API server can decode is compared with the core's
	// output, nothing deleted from either side, but for the listed
	// exclusions, each as many times as the core's report predicts.
	t.Logf("compared %d of %d Pods (%d whole), refused before admission %d; excluded in part %v, predicted %v",
		total["compared"], wantPods, total["compared-whole"], total["+undecodable"], excluded, predicted)
	if total["pods"] != wantPods || total["compared"] != wantPods-total["+undecodable"] || total["+undecodable"] != undecodablePods {
		t.Errorf("compared %d of %d Pods (%d undecodable, want %d): want every decodable Pod compared",
			total["compared"], wantPods, total["+undecodable"], undecodablePods)
	}
	checkInProcessExclusions(t, excluded, predicted)
	if want := podsPerSuite * len(podgen.Suites()); total["generated"] != want {
		t.Errorf("%d generated Pods, want %d", total["generated"], want)
	}
	// What the Pods must exercise for the check to mean anything.
	for _, k := range []string{
		"injected", "error/conflict", "skipped/opted_out", "skipped/not_opted_in", "skipped/host_network",
		"skipped/other_mesh", "skipped/namespace_not_selected", "skipped/labels_not_selected",
		"+json", "+empty-fields", "+other-record", "+values", "+warned", "+service-account", "+marked",
	} {
		if total[k] < 3 {
			t.Errorf("%s: %d Pods, want at least 3", k, total[k])
		}
	}
	if elapsed > time.Minute {
		t.Errorf("the in-process check took %v, want under a minute", elapsed)
	}
}

type inProcessSuite struct {
	name, config string
	pods         [][]byte
	generated    int // the first Pods are generated, the rest from the corpus
}

// outcomes counts Pods by the core's action and reason, and by feature.
type outcomes map[string]int

// compiledPolicy is the policy of config (a SidecarInjection or a
// template) and its halves as the API server compiles them.
func compiledPolicy(tb testing.TB, config string) (*inject.Injector, *admission.Policy, *serverPolicy) {
	tb.Helper()
	in, err := podgen.Injector(config)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := admission.Compile(in, "")
	if err != nil {
		tb.Fatal(err)
	}
	sp, err := loadServerPolicy(p)
	if err != nil {
		tb.Fatal(err)
	}
	return in, p, sp
}

func (s inProcessSuite) run(t *testing.T) (counts, excluded, predicted outcomes) {
	in, p, sp := compiledPolicy(t, s.config)
	sel, err := readBinding(p)
	if err != nil {
		t.Fatal(err)
	}
	var param runtime.Object
	if p.Requires != nil {
		param = &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: p.Requires.Kind}, ObjectMeta: metav1.ObjectMeta{Name: p.Requires.Name}}
	}
	counts, excluded, predicted = outcomes{}, outcomes{}, outcomes{}
	for i, manifest := range s.pods {
		_, e := coreEntry(t, in, manifest)
		key := string(e.Action)
		if e.Reason != "" {
			key += "/" + string(e.Reason)
		}
		counts[key]++
		counts["pods"]++
		if i < s.generated {
			counts["generated"]++
		}
		var raw map[string]any
		if err := yaml.Unmarshal(manifest, &raw); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		emptyFields := podgen.HasEmptyFields(raw)
		s.countFeatures(counts, manifest, raw, in, emptyFields)

		pod, err := decodePod(manifest)
		if err != nil {
			// Not a Pod the API server can decode (the corpus has invalid
			// objects on purpose): it is refused before admission.
			counts["+undecodable"]++
			continue
		}
		if unnamed(pod) {
			// The API server's validation refuses it after admission, as
			// the core does.
			counts["+undecodable"]++
			continue
		}
		// The core injects the Pod the policy sees: as the API server
		// decodes it, explicit empty fields dropped. Both then write the
		// same record, and nothing is left out of the comparison.
		decoded, err := json.Marshal(asMap(t, pod))
		if err != nil {
			t.Fatal(err)
		}
		out, e := coreEntry(t, in, decoded)
		_, hadStatus := pod.Annotations[in.StatusAnnotation()]
		expected := out
		if hadStatus && e.Action == inject.Updated {
			// Excluded (record-updated): the policy leaves a Pod with its
			// own record as created, where the core updates a stale one.
			predicted["record-updated"]++
		}
		selected := sel.selects(pod)
		skipKey := naming.SkippedAnnotationFor(in.Profile())
		if code := podgen.SkipCode(e); selected && !hadStatus && code != "" {
			// The policy marks a Pod it leaves alone with the reason and
			// the core's message as the core writes it.
			mark := code
			if e.Action == inject.Failed {
				mark += ": " + e.Message
				predictMarkExclusions(predicted, e.Message)
			}
			expected = marked(t, decoded, skipKey, mark)
			counts["+marked"]++
		}
		want, err := decodePod(expected)
		if err != nil {
			t.Fatalf("pod %d: the core's output: %v\n%s", i, err, expected)
		}
		got := &admitted{pod: pod}
		if selected {
			if got, err = sp.admit(pod, param); err != nil {
				t.Errorf("pod %d (%s): %v\n%s", i, pod.Name, err, manifest)
				continue
			}
		}
		gotMap, wantMap := asMap(t, got.pod), asMap(t, want)
		reasons, same := markDifference(gotMap, wantMap, skipKey)
		if !same && hadStatus && e.Action == inject.Updated {
			reasons, same = []string{"record-updated"}, reflect.DeepEqual(gotMap, asMap(t, pod))
		}
		for _, r := range reasons {
			excluded[r]++
		}
		if same {
			counts["compared"]++
			if len(reasons) == 0 {
				counts["compared-whole"]++
			}
		}
		if !same {
			t.Errorf("pod %d (%s, core: %s %s): the admitted Pods differ\n--- manifest:\n%s\n--- with the policy:\n%s\n--- from the core:\n%s",
				i, pod.Name, e.Action, e.Message, manifest, asJSON(gotMap), asJSON(wantMap))
			continue
		}
		_, injected := got.pod.Annotations[in.StatusAnnotation()]
		if policyInjected := injected && !hadStatus; policyInjected != (e.Action == inject.Injected) {
			t.Errorf("pod %d (%s): the policy injected=%v, the core %s %s", i, pod.Name, policyInjected, e.Action, e.Reason)
		}
		s.checkWarnings(t, i, p, e, got)
		if len(got.warnings) > 0 {
			counts["+warned"]++
		}
	}
	t.Logf("%d Pods: %v", len(s.pods), counts)
	return counts, excluded, predicted
}

// checkWarnings holds the validating policy's warnings to the core's
// refusal: the core's message for a refusal or a conflict, in the
// policy's words, none for a Pod the core injects.
func (s inProcessSuite) checkWarnings(t *testing.T, i int, p *admission.Policy, e inject.Entry, got *admitted) {
	t.Helper()
	prefix := "sidecar not injected by " + p.Name + ": "
	switch {
	case e.Action == inject.Failed && got.matched:
		// The message the policy marked the Pod with: the core's, in the
		// policy's words (podgen.SkipMark).
		want := prefix + strings.SplitN(podgen.SkipMark("", e), ": ", 2)[1]
		if len(got.warnings) != 1 || got.warnings[0] != want {
			t.Errorf("pod %d: warnings %q, want the core's %q", i, got.warnings, want)
		}
	case len(got.warnings) > 0:
		t.Errorf("pod %d: warnings %q for a Pod the core %s (%s)", i, got.warnings, e.Action, e.Reason)
	}
}

func (s inProcessSuite) countFeatures(counts outcomes, manifest []byte, raw map[string]any, in *inject.Injector, emptyFields bool) {
	if strings.HasPrefix(strings.TrimSpace(string(manifest)), "{") {
		counts["+json"]++
	}
	if emptyFields {
		counts["+empty-fields"]++
	}
	if strings.Contains(string(manifest), "kube-api-access-") {
		counts["+service-account"]++
	}
	meta, _ := raw["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	for key := range ann {
		if _, ok := naming.ProfileOfStatusKey(key); ok && key != in.StatusAnnotation() {
			counts["+other-record"]++
			break
		}
	}
	for _, p := range in.Template().Parameters {
		if _, ok := ann[naming.ProfileAnnotation(in.Profile(), p.Annotation)]; ok {
			counts["+values"]++
			break
		}
	}
}

// checkUncompiled holds the corpus configs that compile to no policy to
// the pinned list, reasons included: a config that stops compiling is not
// dropped from the comparison unseen.
func checkUncompiled(t *testing.T, got map[string]string) {
	t.Helper()
	for name, err := range got {
		reason, pinned := podgen.UncompiledConfigs[name]
		if !pinned || !strings.Contains(err, reason) {
			t.Errorf("corpus config %s compiles to no policy (%s); pinned: %q", name, err, reason)
		}
	}
	for name := range podgen.UncompiledConfigs {
		if _, ok := got[name]; !ok {
			t.Errorf("corpus config %s is pinned as compiling to no policy, but it compiles (or is gone): take it off podgen.UncompiledConfigs", name)
		}
	}
}

// marked is the Pod document (JSON) with annotation key set to value.
func marked(t *testing.T, doc []byte, key, value string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[key] = value
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// coreEntry runs the core over one Pod document: its output and its one
// report entry.
func coreEntry(t *testing.T, in *inject.Injector, doc []byte) ([]byte, inject.Entry) {
	t.Helper()
	out, entries := in.ProcessText(inject.OpInject, doc, 0)
	if len(entries) != 1 {
		t.Fatalf("%d report entries\n%s", len(entries), doc)
	}
	return out, entries[0]
}

// bindingSelector is the mutating binding's namespace and object
// selectors: the API server runs the policy only for the Pods they select,
// in a namespace enabled for the profile.
type bindingSelector struct {
	namespaces, objects labels.Selector
	enabledLabel        string
}

func readBinding(p *admission.Policy) (*bindingSelector, error) {
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	var b admissionregistrationv1.MutatingAdmissionPolicyBinding
	if err := json.Unmarshal(objs[1], &b); err != nil {
		return nil, err
	}
	sel := &bindingSelector{namespaces: labels.Everything(), objects: labels.Everything()}
	if m := b.Spec.MatchResources; m != nil {
		if m.NamespaceSelector != nil {
			if sel.namespaces, err = metav1.LabelSelectorAsSelector(m.NamespaceSelector); err != nil {
				return nil, err
			}
		}
		if m.ObjectSelector != nil {
			if sel.objects, err = metav1.LabelSelectorAsSelector(m.ObjectSelector); err != nil {
				return nil, err
			}
		}
	}
	for _, term := range b.Spec.MatchResources.NamespaceSelector.MatchExpressions {
		if term.Key != "kubernetes.io/metadata.name" {
			sel.enabledLabel = term.Key
		}
	}
	return sel, nil
}

// selects reports whether the binding selects pod, in a namespace that
// kubectl inject enable has labelled for the profile.
func (b *bindingSelector) selects(pod *corev1.Pod) bool {
	ns := labels.Set{"kubernetes.io/metadata.name": pod.Namespace}
	if b.enabledLabel != "" {
		ns[b.enabledLabel] = naming.NamespaceEnabled
	}
	return b.namespaces.Matches(ns) && b.objects.Matches(labels.Set(pod.Labels))
}

// unnamed reports whether a container of pod has no name.
func unnamed(pod *corev1.Pod) bool {
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...) {
		if c.Name == "" {
			return true
		}
	}
	return false
}

func asMap(t *testing.T, pod *corev1.Pod) map[string]any {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, so that numbers compare as numbers whatever their Go type.
	b, _ := json.Marshal(u)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func asJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestExpressionErrorWarning: a template's expression that fails on a Pod
// leaves it as created (the mutating policy ignores its errors), with no
// mark; the validating policy warns that the policy failed on it, within
// the 256 characters the API server keeps of a warning, and the error is
// the evaluator's (which kubectl inject explain prints).
func TestExpressionErrorWarning(t *testing.T) {
	_, _, sp := compiledPolicy(t, podgen.ExpressionErrorTemplate)
	pod, err := decodePod([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: portless}\nspec:\n  containers: [{name: app, image: busybox}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := sp.admit(pod.DeepCopy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.mutationError == nil || len(got.pod.Spec.Containers) != 1 || len(got.pod.Annotations) != 0 {
		t.Errorf("the mutating policy did not fail and leave the Pod as created: error %v, %d containers, annotations %v", got.mutationError, len(got.pod.Spec.Containers), got.pod.Annotations)
	}
	if got.mutationError != nil && !strings.Contains(got.mutationError.Error(), "no such key: ports") {
		t.Errorf("the error does not name the missing field: %v", got.mutationError)
	}
	if len(got.warnings) != 1 {
		t.Fatalf("warnings: %q", got.warnings)
	}
	if kept := got.warnings[0][:min(256, len(got.warnings[0]))]; !strings.Contains(kept, "the policy left no reason on the Pod: it failed on it (kubectl inject explain names the error)") {
		t.Errorf("the first 256 characters of the warning do not say that the policy failed: %q", kept)
	}
}
