package admission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
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

// generatedPerSuite is how many generated Pods each suite creates.
const generatedPerSuite = 60

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
		suites = append(suites, suite{name: s.Name, config: s.Config, pods: g.Pods(int64(i+1), generatedPerSuite, "gen-"+s.Name), generated: generatedPerSuite})
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
	uncompiled, uncompiledPods := map[string]string{}, 0
	wantPods := 0 // every Pod of every suite, counted before any runs
	for _, s := range suites {
		wantPods += len(s.pods)
	}
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
			uncompiled[name] = err.Error()
			pods, err := podgen.CasePods(filepath.Dir(config))
			if err != nil {
				t.Fatal(err)
			}
			uncompiledPods += len(pods)
			continue
		}
		pods, err := podgen.CasePods(filepath.Dir(config))
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) > 0 {
			suites = append(suites, suite{name: "corpus-" + filepath.Base(filepath.Dir(config)), config: string(data), pods: pods})
			wantPods += len(pods)
		}
	}
	total := map[string]int{}
	excluded, predicted := map[string]int{}, map[string]int{}
	excluded["uncompiled-config"] = uncompiledPods
	predicted["uncompiled-config"] = expectedUncompiled(t, uncompiled)
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			o := runSuite(t, s)
			for k, n := range o.counts {
				total[k] += n
			}
			for k, n := range o.excluded {
				excluded[k] += n
			}
			for k, n := range o.predicted {
				predicted[k] += n
			}
		})
	}
	t.Logf("outcomes: %v", total)
	// explain gives a verdict on every Pod the API server created, and
	// each agrees with what the API server did.
	t.Logf("explain: %d Pods explained, %d agree with the API server, %d created", total["explained"], total["explain-agrees"], total["created"])
	if total["explained"] != total["created"] || total["explain-agrees"] != total["created"] || total["created"] < 300 {
		t.Errorf("explain: %d Pods explained, %d agree, of %d created: want every created Pod explained and agreeing (at least 300)",
			total["explained"], total["explain-agrees"], total["created"])
	}
	// Every Pod is compared with the core's output (comparable leaves out
	// only what the API server sets anew at each creation), or in part for
	// a listed reason as many times as the core's report predicts.
	t.Logf("compared %d of %d Pods with the core's output; excluded (the Pods of %d uncompiled configs), or excluded in part: %v",
		total["compared"], wantPods, len(uncompiled), excluded)
	checkExclusions(t, excluded, predicted)
	partly := 0
	for reason, n := range excluded {
		if reason != "uncompiled-config" {
			partly += n
		}
	}
	if total["pods"] != wantPods || total["compared"] != wantPods || total["compared-whole"]+total["compared-excluding"] != wantPods {
		t.Errorf("%d Pods run, %d compared (%d whole, %d excluding a listed part), of %d: want every Pod compared",
			total["pods"], total["compared"], total["compared-whole"], total["compared-excluding"], wantPods)
	}
	if total["compared-excluding"] > partly {
		t.Errorf("%d Pods compared excluding a part, for %d exclusions", total["compared-excluding"], partly)
	}
	if want := generatedPerSuite * len(podgen.Suites()); total["generated"] != want {
		t.Errorf("%d generated Pods, want %d", total["generated"], want)
	}
	// Every Pod the policy injected under a template with the Envoy
	// sidecar had its bootstrap checked.
	if total["bootstraps"] != total["policy-injected-envoy"] || total["bootstraps"] < 100 {
		t.Errorf("%d bootstraps checked, of %d Pods the policy injected with the Envoy sidecar (want all, at least 100)", total["bootstraps"], total["policy-injected-envoy"])
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

// suiteOutcome is what runSuite counted: the Pods by the core's action
// and by feature, the exclusions each comparison made, and the
// exclusions the core's report predicted.
type suiteOutcome struct {
	counts, excluded, predicted map[string]int
}

func runSuite(t *testing.T, s suite) suiteOutcome {
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
	counts := map[string]int{}
	for i := range runs {
		if i < s.generated {
			counts["generated"]++
		}
	}
	predicted := predictExclusions(t, runs, in.StatusAnnotation())
	excluded := map[string]int{}
	agreeWithExplain(t, in, runs, verdicts, counts)
	envoy := carriesBootstrap(t, in)
	skipKey := naming.SkippedAnnotationFor(in.Profile())
	for i, r := range runs {
		deletePod(t, r.manifest)
		_, hadStatus := annotation(podFrom(t, r.manifest).Object, in.StatusAnnotation())
		// The core's output; a Pod the policy leaves alone carries the
		// reason and the core's message as they are.
		expected := r.coreOut
		code := podgen.SkipCode(r.entry)
		if code != "" && !hadStatus && selected(r.entry) {
			mark := code
			if r.entry.Action == inject.Failed {
				mark += ": " + r.entry.Message
			}
			expected = marked(t, r.decoded, skipKey, mark)
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
		if r.admitErr != nil || wantErr != nil {
			if r.admitErr == nil || wantErr == nil || r.admitErr.Error() != wantErr.Error() {
				t.Errorf("pod %d (%s): created with the policy: %v; created from the core's output: %v\n%s", i, name, r.admitErr, wantErr, r.manifest)
				continue
			}
			counts["compared"]++ // the same error
			counts["compared-whole"]++
			continue
		}
		counts["created"]++
		if reasons, ok := r.compare(t, want, hadStatus, skipKey); !ok {
			t.Errorf("pod %d (%s, core: %s %s): the stored Pods differ\n--- manifest:\n%s--- with the policy:\n%s\n--- from kubectl inject --local:\n%s",
				i, name, r.entry.Action, r.entry.Message, r.manifest, toJSON(r.admitted), toJSON(want))
			continue
		} else {
			counts["compared"]++
			if len(reasons) == 0 {
				counts["compared-whole"]++
			} else {
				counts["compared-excluding"]++
			}
			for _, reason := range reasons {
				excluded[reason]++
			}
		}
		_, admitted := annotation(r.admitted, in.StatusAnnotation())
		injectedByPolicy := admitted && !hadStatus
		if injectedByPolicy {
			counts["policy-injected"]++
			// The Envoy sidecar the template adds, or one the Pod carried
			// from another profile's injection at build time.
			decodedSpec, _ := podFrom(t, r.decoded).Object["spec"].(map[string]any)
			if envoy || envoycheck.Sidecar(decodedSpec) != nil {
				counts["policy-injected-envoy"]++
			}
			// What the API server stored runs as Envoy would load it.
			spec, _ := r.admitted["spec"].(map[string]any)
			if b, err := envoycheck.Pod(spec); err != nil {
				t.Errorf("pod %d (%s): the sidecar's bootstrap as admitted: %v", i, name, err)
			} else if b != nil {
				counts["bootstraps"]++
			}
		}
		if r.entry.Action == inject.Injected {
			counts["core-injected-created"]++ // the API server refuses some injected Pods
		}
		if coreInjected := r.entry.Action == inject.Injected; injectedByPolicy != coreInjected {
			t.Errorf("pod %d (%s): the policy injected=%v, the core %s %s", i, name, injectedByPolicy, r.entry.Action, r.entry.Reason)
		}
	}
	t.Logf("suite %s: %d Pods, core actions %v, excluded in part %v (predicted %v)", s.name, len(runs), counts, excluded, predicted)
	return suiteOutcome{counts: counts, excluded: excluded, predicted: predicted}
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
