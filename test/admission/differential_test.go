package admission

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/plugin/cmd"
)

// suite is one policy (a SidecarInjection) and the Pods created under it.
type suite struct {
	name   string
	config string
	pods   [][]byte
	// generated is how many of the Pods (the first) are generated.
	generated int
}

// The configs the suites and other tests use (internal/podgen).
const (
	defaultConfig     = podgen.DefaultConfig
	meshProfileConfig = podgen.MeshProfileConfig
	logsConfig        = podgen.LogsConfig
	twinConfig        = podgen.TwinConfig
)

// TestDifferential creates every Pod twice: with the policy installed, and
// as kubectl inject --local's output with no policy. The stored Pods must
// be equal field for field, the policy must leave alone exactly the Pods
// the core skips or refuses, and the outcomes must cover what the policy
// does: the counts of the core's actions are asserted. The in-process
// check (pkg/admission TestInProcess) runs the same Pods, and more, in
// seconds; this is the end-to-end proof on a real API server.
func TestDifferential(t *testing.T) {
	c.Require(t)
	var suites []suite
	for i, s := range podgen.Suites() {
		g, err := podgen.For(s.Config, s.Others...)
		if err != nil {
			t.Fatal(err)
		}
		suites = append(suites, suite{name: s.Name, config: s.Config, pods: g.Pods(int64(i+1), 60, "gen-"+s.Name), generated: 60})
	}
	for _, ns := range []string{"ns-a", "ns-b"} {
		ensureNamespace(t, ns)
	}
	corpus, err := podgen.CorpusPods("../../pkg/inject/testdata/golden")
	if err != nil {
		t.Fatal(err)
	}
	suites[0].pods = append(suites[0].pods, corpus...)
	suites[0].pods = append(suites[0].pods, portPods()...)
	// Corpus cases with a config of their own: a suite each, under their
	// config, when it compiles to a policy (a config whose kinds leave out
	// Pods does not).
	configs, _ := filepath.Glob("../../pkg/inject/testdata/golden/*/config.yaml")
	for _, config := range configs {
		data, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admission.Compile(injectorFor(t, string(data)), ""); err != nil {
			// Only the pinned configs, for the pinned reasons.
			name := filepath.Base(filepath.Dir(config))
			if reason, pinned := podgen.UncompiledConfigs[name]; !pinned || !strings.Contains(err.Error(), reason) {
				t.Errorf("corpus config %s compiles to no policy (%v); pinned: %q", name, err, reason)
			}
			continue
		}
		pods, err := podgen.CasePods(filepath.Dir(config))
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) > 0 {
			suites = append(suites, suite{name: "corpus-" + filepath.Base(filepath.Dir(config)), config: string(data), pods: pods})
		}
	}
	total := map[string]int{}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			for k, n := range runSuite(t, s) {
				total[k] += n
			}
		})
	}
	t.Logf("outcomes: %v", total)
	// explain agrees with the API server on every Pod it created.
	t.Logf("explain: %d Pods explained, %d agree with the API server", total["explained"], total["explain-agrees"])
	if total["explained"] < 300 || total["explain-agrees"] != total["explained"] {
		t.Errorf("explain: %d Pods explained, %d agree; want at least 300, all agreeing", total["explained"], total["explain-agrees"])
	}
	// Every Pod is compared whole (comparable leaves out only what the API
	// server sets anew at each creation); none is waived.
	t.Logf("compared %d of %d Pods, waived %d", total["compared"], total["pods"], total["waived"])
	if total["waived"] != 0 || total["compared"] != total["pods"] {
		t.Errorf("compared %d of %d Pods, waived %d: want all compared, none waived", total["compared"], total["pods"], total["waived"])
	}
	if total["generated"] < 300 {
		t.Errorf("%d generated Pods, want at least 300", total["generated"])
	}
	for _, k := range []string{
		"injected", "error/conflict", "error/invalid_object", "skipped/opted_out", "skipped/not_opted_in",
		"skipped/host_network", "skipped/other_mesh", "+json", "+empty-fields", "+other-record", "+values", "+service-account", "+marked",
	} {
		if total[k] < 3 {
			t.Errorf("%s: %d Pods, want at least 3", k, total[k])
		}
	}
	// The policy's outcomes are the core's: as many injected, as many
	// left as created.
	if total["policy-injected"] != total["core-injected-created"] {
		t.Errorf("the policy injected %d Pods, the core %d", total["policy-injected"], total["core-injected-created"])
	}
}

func injectorFor(t *testing.T, config string) *inject.Injector {
	t.Helper()
	cfg, err := inject.ParseConfig([]byte(config), nil)
	if err != nil {
		t.Fatal(err)
	}
	tpl := cfg.Template
	if tpl == nil {
		tpl = inject.DefaultTemplate()
	}
	in, err := inject.New(tpl, cfg.Settings)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

type podRun struct {
	// decoded is the manifest as the API server decodes it (the manifest
	// itself when the API server refuses it).
	manifest, decoded, coreOut []byte
	entry                      inject.Entry
	admitted                   map[string]any
	admitErr                   error
}

func runSuite(t *testing.T, s suite) map[string]int {
	in := injectorFor(t, s.config)
	configFile := writeFile(t, "config.yaml", []byte(s.config))
	for _, m := range s.pods {
		ensureNamespace(t, podFrom(t, m).GetNamespace())
	}
	runs := make([]podRun, len(s.pods))
	var probe []byte
	for i, m := range s.pods {
		// The core injects the Pod the policy sees: as the API server
		// decodes and defaults it before admission (a dry run, with no
		// policy installed yet). One it refuses is refused either way.
		decoded := m
		if pod, err := createPod(t, m, true); err == nil {
			if decoded, err = json.Marshal(pod); err != nil {
				t.Fatal(err)
			}
		}
		out, entry := coreInject(t, in, decoded)
		runs[i] = podRun{manifest: m, decoded: decoded, coreOut: out, entry: entry}
		if probe == nil && entry.Action == inject.Injected {
			// The probe must be a Pod the API server accepts once injected
			// (an override may ask for more than the limit, say) and as it
			// is (a copy of the sidecar may mount the template's volume).
			if _, err := createPod(t, renamed(t, out, "probe"), true); err == nil {
				if _, err := createPod(t, renamed(t, m, "probe"), true); err == nil {
					probe = renamed(t, m, "probe")
				}
			}
		}
	}
	if probe == nil {
		// Every Pod of the suite already has a record (or is skipped): probe
		// with a plain one.
		ns := podFrom(t, s.pods[0]).GetNamespace()
		probe = []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: " + ns + "}\nspec:\n  containers: [{name: probe-app, image: busybox}]\n")
		if _, e := coreInject(t, in, probe); e.Action != inject.Injected {
			t.Fatalf("no Pod of the suite, nor a plain one, is injected by the core (%s %s): nothing to probe the policy with", e.Action, e.Reason)
		}
	}
	applyPolicy(t, configFile, probe)
	for i := range runs {
		runs[i].admitted, runs[i].admitErr = createPod(t, runs[i].manifest, false)
	}
	verdicts := explainRuns(t, in, runs)
	deletePolicy(t, configFile, probe)
	counts := map[string]int{"generated": s.generated}
	agreeWithExplain(t, in, runs, verdicts, counts)
	bootstraps := 0
	for i, r := range runs {
		deletePod(t, r.manifest)
		// A Pod that already carries a record is left as created by the
		// policy (injected at build time, or re-invoked), where the core
		// would update a stale record: compare with the manifest itself.
		_, hadStatus := annotation(podFrom(t, r.manifest).Object, in.StatusAnnotation())
		expected := r.coreOut
		if hadStatus {
			expected = r.decoded
		}
		if code := admission.SkipCode(r.entry); code != "" && !hadStatus && selected(r.entry) {
			// The policy marks a Pod it leaves alone with the reason.
			expected = marked(t, r.decoded, inject.SkippedAnnotationFor(in.Profile()), podgen.SkipMark(code, r.entry))
			counts["+marked"]++
		}
		want, wantErr := createPod(t, expected, false)
		deletePod(t, expected)
		key := string(r.entry.Action)
		if r.entry.Reason != "" {
			key += "/" + string(r.entry.Reason)
		}
		counts[key]++
		countFeatures(counts, r.manifest, want, in)
		name := podFrom(t, r.manifest).GetName()
		counts["pods"]++
		if podgen.HasEmptyFields(podFrom(t, r.manifest).Object) {
			counts["+empty-fields"]++
		}
		if strings.Contains(string(r.manifest), "kube-api-access-") {
			counts["+service-account"]++
		}
		if strings.HasPrefix(strings.TrimSpace(string(r.manifest)), "{") {
			counts["+json"]++
		}
		counts["compared"]++ // whole: the errors, or the stored Pods
		switch {
		case r.admitErr != nil || wantErr != nil:
			if r.admitErr == nil || wantErr == nil || r.admitErr.Error() != wantErr.Error() {
				t.Errorf("pod %d (%s): created with the policy: %v; created from the core's output: %v\n%s", i, name, r.admitErr, wantErr, r.manifest)
			}
			continue
		case !reflect.DeepEqual(r.admitted, want):
			t.Errorf("pod %d (%s, core: %s %s): the stored Pods differ\n--- manifest:\n%s--- with the policy:\n%s\n--- from kubectl inject --local:\n%s",
				i, name, r.entry.Action, r.entry.Message, r.manifest, toJSON(r.admitted), toJSON(want))
		}
		_, admitted := annotation(r.admitted, in.StatusAnnotation())
		injectedByPolicy := admitted && !hadStatus
		if injectedByPolicy {
			counts["policy-injected"]++
			// What the API server stored runs as Envoy would load it.
			spec, _ := r.admitted["spec"].(map[string]any)
			if b, err := envoycheck.Pod(spec); err != nil {
				t.Errorf("pod %d (%s): the sidecar's bootstrap as admitted: %v", i, name, err)
			} else if b != nil {
				bootstraps++
			}
		}
		if r.entry.Action == inject.Injected {
			counts["core-injected-created"]++ // the API server refuses some injected Pods
		}
		if coreInjected := r.entry.Action == inject.Injected; injectedByPolicy != coreInjected {
			t.Errorf("pod %d (%s): the policy injected=%v, the core %s %s", i, name, injectedByPolicy, r.entry.Action, r.entry.Reason)
		}
	}
	t.Logf("suite %s: %d Pods, core actions %v, %d Envoy bootstraps checked", s.name, len(runs), counts, bootstraps)
	return counts
}

// renamed is manifest with another name, for a dry-run probe that must not
// collide with the Pods created.
func renamed(t *testing.T, manifest []byte, name string) []byte {
	t.Helper()
	u := podFrom(t, manifest)
	u.SetName(name)
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// selected reports whether the binding selects a Pod the core reports as
// e: every test namespace is enabled, so the core's namespace and label
// skips are the binding's.
func selected(e inject.Entry) bool {
	return e.Reason != inject.ReasonNamespaceNotSelect && e.Reason != inject.ReasonLabelsNotSelected
}

// marked is the Pod manifest (YAML or JSON) as JSON, with annotation key
// set to value.
func marked(t testing.TB, manifest []byte, key, value string) []byte {
	t.Helper()
	u := podFrom(t, manifest)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[key] = value
	u.SetAnnotations(ann)
	out, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

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

// namespaceReasons are explain's reasons for a namespace the binding
// leaves out.
var namespaceReasons = map[string]bool{"namespace_not_enabled": true, "namespace_not_selected": true, "namespace_excluded": true, "system_namespace": true}

// agreeWithExplain holds explain's verdict on each Pod to what the API
// server did: injected or not, and the reason the policy wrote on a Pod
// it left alone (the binding's and the opt-in mode's, which it does not
// write, by the core's reason).
func agreeWithExplain(t *testing.T, in *inject.Injector, runs []podRun, verdicts map[string]cmd.Verdict, counts map[string]int) {
	t.Helper()
	unmarked := map[inject.Reason]string{
		inject.ReasonNamespaceNotSelect: "namespace_not_enabled", inject.ReasonLabelsNotSelected: "labels_not_selected", inject.ReasonNotOptedIn: "not_opted_in",
	}
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
		mark, marked := annotation(r.admitted, inject.SkippedAnnotationFor(in.Profile()))
		want, _ := admission.MarkReason(mark)
		switch {
		case injected:
			want = ""
		case hadStatus:
			want = "already_injected"
		case !marked:
			want = unmarked[r.entry.Reason]
		}
		if r.entry.Reason == inject.ReasonNamespaceNotSelect && !injected && !marked && namespaceReasons[v.Reason] {
			want = v.Reason // the binding's namespace selector, in the words of the settings
		}
		if v.Injected != injected || v.Reason != want {
			t.Errorf("pod %d (%s): explain says injected=%v %s (%s); the API server injected=%v, reason %q (core: %s %s)",
				i, u.GetName(), v.Injected, v.Reason, v.Message, injected, want, r.entry.Action, r.entry.Reason)
			continue
		}
		counts["explain-agrees"]++
	}
}
