package admission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// suite is one policy (a SidecarInjection) and the Pods created under it.
type suite struct {
	name   string
	config string
	// others are other profiles' configs: some Pods carry their injection.
	others []string
	pods   [][]byte
}

// templateSidecar and templateVolume are the first container and volume a
// suite's template adds, for the generator's look-alikes.
func templateParts(t *testing.T, in *inject.Injector) (map[string]any, map[string]any) {
	t.Helper()
	decode := func(list []*kyaml.Node) map[string]any {
		if len(list) == 0 {
			return nil
		}
		var m map[string]any
		if err := list[0].Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tpl := in.Template()
	c := decode(tpl.Containers)
	if c == nil {
		c = decode(tpl.InitContainers)
	}
	return c, decode(tpl.Volumes)
}

const (
	defaultConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: envoy}
spec:
  mode: opt-out
`
	nativeOptInConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: envoy}
spec:
  mode: opt-in
  native: true
`
	metadataConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: mesh}
spec:
  namespaces: [default, ns-a]
  selector: tier!=db
  template:
    metadata:
      labels: {mesh: kinject}
      annotations:
        prometheus.io/scrape: "true"
        mesh.example/quoted: 'a "b" <c> & \d'
    initContainers:
    - name: mesh-init
      image: busybox
      command: [sh, -c, "true"]
    - name: proxy
      image: envoyproxy/envoy:v1.36.2
      restartPolicy: Always
      ports: [{containerPort: 15001}]
      resources: {requests: {cpu: 100m, memory: 64Mi}}
    volumes:
    - name: mesh-certs
      emptyDir: {}
`
	twoSidecarsConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: pair}
spec:
  image: registry.local/proxy:v2
  injectHostNetwork: true
  template:
    containers:
    - name: proxy
      image: envoyproxy/envoy:v1.36.2
      args: ["--log-level", "info"]
      ports: [{containerPort: 15000, protocol: TCP}, {containerPort: 15090, name: metrics}]
      env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
      volumeMounts: [{name: proxy-conf, mountPath: /etc/proxy}]
    - name: logger
      image: fluent/fluent-bit:3.0
      resources: {limits: {memory: 100Mi, cpu: "0.5"}}
    volumes:
    - name: proxy-conf
      configMap: {name: proxy, defaultMode: 420}
    - name: log-buffer
      emptyDir: {sizeLimit: 1Gi}
`
)

// TestDifferential creates every Pod twice: with the policy installed, and
// as kubectl inject --local's output with no policy. The stored Pods must
// be equal field for field, and the policy must leave alone exactly the
// Pods the core skips or refuses.
func TestDifferential(t *testing.T) {
	c.Require(t)
	suites := []suite{
		{name: "default", config: defaultConfig, others: []string{logsConfig, twinConfig}},
		{name: "native-opt-in", config: nativeOptInConfig, others: []string{logsConfig, tagConfig}},
		{name: "metadata-init", config: metadataConfig, others: []string{tagConfig, logsConfig}},
		{name: "two-sidecars", config: twoSidecarsConfig, others: []string{logsConfig}},
		{name: "profile-mesh", config: meshProfileConfig, others: []string{defaultConfig, logsConfig, tagConfig}},
	}
	for _, ns := range []string{"ns-a", "ns-b"} {
		ensureNamespace(t, ns)
	}
	generated := 0
	for i := range suites {
		suites[i].pods = generatedPods(int64(i+1), 60, "gen-"+suites[i].name, generatorFor(t, suites[i].config, suites[i].others...))
		generated += len(suites[i].pods)
	}
	suites[0].pods = append(suites[0].pods, corpusPods(t, "../../pkg/inject/testdata/golden")...)
	corpus := len(suites[0].pods) - 60
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
			t.Logf("%s: no policy: %v", config, err)
			continue
		}
		if pods := casePods(t, filepath.Dir(config)); len(pods) > 0 {
			suites = append(suites, suite{name: "corpus-" + filepath.Base(filepath.Dir(config)), config: string(data), pods: pods})
			corpus += len(pods)
		}
	}
	t.Logf("%d generated Pods, %d corpus Pods", generated, corpus)
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { runSuite(t, s) })
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
	manifest, coreOut []byte
	entry             inject.Entry
	admitted          map[string]any
	admitErr          error
}

func runSuite(t *testing.T, s suite) {
	in := injectorFor(t, s.config)
	configFile := writeFile(t, "config.yaml", []byte(s.config))
	for _, m := range s.pods {
		ensureNamespace(t, podFrom(t, m).GetNamespace())
	}
	runs := make([]podRun, len(s.pods))
	var probe []byte
	for i, m := range s.pods {
		out, entry := coreInject(t, in, m)
		runs[i] = podRun{manifest: m, coreOut: out, entry: entry}
		if probe == nil && entry.Action == inject.Injected {
			// The probe must be a Pod the API server accepts once injected
			// (an override may ask for more than the limit, say).
			if _, err := createPod(t, renamed(t, out, "probe"), true); err == nil {
				probe = renamed(t, m, "probe")
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
	deletePolicy(t, configFile, probe)
	counts := map[string]int{}
	for i, r := range runs {
		deletePod(t, r.manifest)
		// A Pod that already carries a record is left as created by the
		// policy (injected at build time, or re-invoked), where the core
		// would update a stale record: compare with the manifest itself.
		_, hadStatus := annotation(podFrom(t, r.manifest).Object, in.StatusAnnotation())
		expected := r.coreOut
		if hadStatus {
			expected = r.manifest
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
		if hasEmptyFields(podFrom(t, r.manifest).Object) {
			// The API server drops explicit empty fields before admission: the
			// policy cannot tell "volumes: null" from no volumes. Only the
			// record's created and null lists may differ.
			withoutCreated(t, r.admitted)
			withoutCreated(t, want)
		}
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
		if coreInjected := r.entry.Action == inject.Injected; injectedByPolicy != coreInjected {
			t.Errorf("pod %d (%s): the policy injected=%v, the core %s %s", i, name, injectedByPolicy, r.entry.Action, r.entry.Reason)
		}
	}
	t.Logf("suite %s: %d Pods, core actions %v", s.name, len(runs), counts)
}

// corpusPods returns the Pods of the golden corpus's cases without a config
// of their own (they use the default template, as the default suite).
func corpusPods(t *testing.T, dir string) [][]byte {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join(dir, "*", "input.yaml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases under %s: %v", dir, err)
	}
	var out [][]byte
	for _, input := range cases {
		caseDir := filepath.Dir(input)
		if _, err := os.Stat(filepath.Join(caseDir, "config.yaml")); err == nil {
			continue
		}
		out = append(out, casePods(t, caseDir)...)
	}
	return out
}

// casePods returns every Pod of a golden case's input, and a Pod made of
// every other object's pod template (its labels and annotations, and its
// spec), each named after the case.
func casePods(t *testing.T, caseDir string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(caseDir, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for j, doc := range strings.Split(string(data), "\n---") {
		var obj map[string]any
		if yaml.Unmarshal([]byte(doc), &obj) != nil || obj == nil {
			continue // the corpus has invalid documents on purpose
		}
		for k, pod := range podsOf(obj) {
			meta, _ := pod["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["name"] = strings.ToLower(filepath.Base(caseDir)) + "-" + strconv.Itoa(j) + "-" + strconv.Itoa(k)
			if ns, _ := objNamespace(obj); ns != "" {
				meta["namespace"] = ns
			}
			pod["metadata"] = meta
			b, err := yaml.Marshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// podsOf returns obj as a Pod when it is one, or Pods made of the pod
// templates of obj (and of a List's items).
func podsOf(obj map[string]any) []map[string]any {
	kind, _ := obj["kind"].(string)
	if kind == "List" {
		var out []map[string]any
		items, _ := obj["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, podsOf(m)...)
			}
		}
		return out
	}
	if kind == "Pod" {
		return []map[string]any{obj}
	}
	paths := map[string][]string{
		"Deployment": {"spec", "template"}, "ReplicaSet": {"spec", "template"}, "StatefulSet": {"spec", "template"},
		"DaemonSet": {"spec", "template"}, "Job": {"spec", "template"}, "ReplicationController": {"spec", "template"},
		"PodTemplate": {"template"}, "CronJob": {"spec", "jobTemplate", "spec", "template"},
	}
	path, ok := paths[kind]
	if !ok {
		return nil
	}
	var cur any = obj
	for _, f := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	tpl, ok := cur.(map[string]any)
	if !ok {
		return nil
	}
	spec, ok := tpl["spec"].(map[string]any)
	if !ok {
		return nil
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec}
	if m, ok := tpl["metadata"].(map[string]any); ok {
		meta := map[string]any{}
		for _, f := range []string{"labels", "annotations"} {
			if v, ok := m[f]; ok {
				meta[f] = v
			}
		}
		pod["metadata"] = meta
	}
	return []map[string]any{pod}
}

func objNamespace(obj map[string]any) (string, bool) {
	meta, _ := obj["metadata"].(map[string]any)
	ns, ok := meta["namespace"].(string)
	return ns, ok
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

// hasEmptyFields reports whether a Pod manifest has a field the injection
// records (labels, annotations, initContainers, volumes) set explicitly to
// null, [] or {}.
func hasEmptyFields(pod map[string]any) bool {
	for _, f := range []struct{ parent, field string }{
		{"metadata", "labels"}, {"metadata", "annotations"}, {"spec", "initContainers"}, {"spec", "volumes"},
	} {
		m, _ := pod[f.parent].(map[string]any)
		v, present := m[f.field]
		if !present {
			continue
		}
		switch x := v.(type) {
		case nil:
			return true
		case []any:
			if len(x) == 0 {
				return true
			}
		case map[string]any:
			if len(x) == 0 {
				return true
			}
		}
	}
	return false
}

// withoutCreated drops the created and null lists from pod's status
// records, every profile's.
func withoutCreated(t *testing.T, pod map[string]any) {
	t.Helper()
	if pod == nil {
		return
	}
	u := unstructured.Unstructured{Object: pod}
	ann := u.GetAnnotations()
	for key, record := range ann {
		if _, ok := inject.ProfileOfStatusKey(key); !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(record), &m); err != nil {
			t.Fatalf("status record %s: %v", key, err)
		}
		delete(m, "created")
		delete(m, "null")
		delete(m, "nullTokens")
		b, _ := json.Marshal(m)
		ann[key] = string(b)
	}
	u.SetAnnotations(ann)
}
