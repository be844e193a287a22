package processor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/fn/processor"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Two profiles for the property tests: the embedded Envoy sidecar (under
// a name, or as the default profile) and a log shipper that adds a
// container, a volume and a label.
var (
	meshProfile    = profileConfig("mesh", "mesh", "")
	defaultProfile = profileConfig("envoy", "", "")
	logsProfile    = profileConfig("logs", "logs", `  template:
    metadata:
      labels:
        logging.example.com/shipped: "true"
    containers:
    - name: log-shipper
      image: fluent/fluent-bit:3.1.9
      volumeMounts:
      - name: app-logs
        mountPath: /var/log/app
    volumes:
    - name: app-logs
      emptyDir: {}
`)
)

func profileConfig(name, profile, spec string) string {
	s := "apiVersion: " + inject.ConfigAPIVersion + "\nkind: " + inject.ConfigKind + "\nmetadata:\n  name: " + name + "\nspec:\n"
	if profile != "" {
		s += "  profile: " + profile + "\n"
	} else {
		s += "  mode: opt-out\n"
	}
	return s + spec
}

// nativeLogsProfile is logsProfile as a native sidecar (an init container
// with restartPolicy: Always) that also annotates the pod.
var nativeLogsProfile = profileConfig("logs", "logs", `  native: true
  template:
    metadata:
      annotations:
        logging.example.com/format: json
    containers:
    - name: log-shipper
      image: fluent/fluent-bit:3.1.9
`)

// The pairs of TestProfilesRoundTrip that hold a profile.
var (
	meshPairs        = []string{"mesh,logs", "logs,mesh", "mesh,native-logs", "native-logs,mesh"}
	defaultPairs     = []string{"default,logs", "logs,default"}
	classicLogsPairs = []string{"mesh,logs", "logs,mesh", "default,logs", "logs,default"}
)

// roundTripExclusions are the corpus inputs that cannot take both profiles
// of a pair, on purpose: each names the pairs it leaves out (nil: every
// pair), an error the run must give, and why. A run that fails is an
// error unless each of its errors is one listed for it.
var roundTripExclusions = []struct {
	dir      string
	pairs    []string
	err, why string
}{
	{"error-conflict", nil, `conflict: spec.template.spec.initContainers: container "envoy" already exists and was not injected by kubectl-inject`,
		"a StatefulSet has a container of its own named envoy, as the Envoy sidecar of mesh and of the default profile is"},
	{"error-override-value", meshPairs, `"lots" is not a resource quantity such as 250m, 0.5 or 1Gi`,
		"a Deployment sets mesh's cpu-request override to a value that is not a quantity"},
	{"profiles-uninject-all", defaultPairs, `container "envoy" (spec.template.spec.initContainers) is added by profile "mesh" and by the default profile`,
		"the input carries mesh's Envoy, whose container has the default profile's name"},
	{"profiles-uninject-mesh", defaultPairs, `container "envoy" (spec.template.spec.initContainers) is added by profile "mesh" and by the default profile`,
		"the input carries mesh's Envoy, whose container has the default profile's name"},
	{"profiles-upgrade", defaultPairs, `container "envoy" (spec.template.spec.initContainers) is added by profile "mesh" and by the default profile`,
		"the input carries mesh's Envoy, whose container has the default profile's name"},
	{"uninject-configmap", meshPairs, `container "envoy" (spec.template.spec.initContainers) is added by the default profile and by profile "mesh"`,
		"the input carries the default profile's Envoy, whose container has mesh's name"},
	{"uninject-sidecarinjection", meshPairs, `container "envoy" (spec.template.spec.initContainers) is added by the default profile and by profile "mesh"`,
		"the input carries the default profile's Envoy, whose container has mesh's name"},
	{"no-config", classicLogsPairs, `the pod runs to completion, and classic sidecar "log-shipper" would keep it running after the app exits`,
		"a CronJob's Pods run to completion: the classic log shipper is refused there (native-logs is not)"},
	{"uninject-configmap", classicLogsPairs, `the pod runs to completion, and classic sidecar "log-shipper" would keep it running after the app exits`,
		"a CronJob's Pods run to completion: the classic log shipper is refused there (native-logs is not)"},
	{"uninject-sidecarinjection", classicLogsPairs, `the pod runs to completion, and classic sidecar "log-shipper" would keep it running after the app exits`,
		"a CronJob's Pods run to completion: the classic log shipper is refused there (native-logs is not)"},
}

// excludedErrors are the errors roundTripExclusions lists for the pair on
// the input of dir, none when the run must pass.
func excludedErrors(dir, pair string) []string {
	var out []string
	for _, x := range roundTripExclusions {
		if x.dir == dir && (x.pairs == nil || slices.Contains(x.pairs, pair)) {
			out = append(out, x.err)
		}
	}
	return out
}

// unlistedErrors are the errors of a run (its "[error]" lines) that are
// not among listed, and the listed ones it does not give.
func unlistedErrors(err error, listed []string) (unlisted, missing []string) {
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "[error]") {
			continue
		}
		if !slices.ContainsFunc(listed, func(l string) bool { return strings.Contains(line, l) }) {
			unlisted = append(unlisted, line)
		}
	}
	for _, l := range listed {
		if !strings.Contains(err.Error(), l) {
			missing = append(missing, l)
		}
	}
	return unlisted, missing
}

// TestProfilesRoundTrip runs every input of the function's corpus with two
// profiles among its items, in both orders: a second run changes nothing;
// removing either profile gives the workloads exactly as injecting only the
// other does; removing all profiles gives the input back byte for byte. The
// last two need an input without status records, whose injections belong
// to neither profile. A run that fails is an error unless
// roundTripExclusions lists it, with that error.
func TestProfilesRoundTrip(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	pairs := []struct {
		name               string
		a, b               string
		aProfile, bProfile string
	}{
		{"mesh,logs", meshProfile, logsProfile, "mesh", "logs"},
		{"logs,mesh", logsProfile, meshProfile, "logs", "mesh"},
		{"default,logs", defaultProfile, logsProfile, "", "logs"},
		{"logs,default", logsProfile, defaultProfile, "logs", ""},
		{"mesh,native-logs", meshProfile, nativeLogsProfile, "mesh", "logs"},
		{"native-logs,mesh", nativeLogsProfile, meshProfile, "logs", "mesh"},
	}
	// What the corpus and the exclusions give, counted apart from the runs.
	want := 0
	for _, dir := range dirs {
		for _, p := range pairs {
			if len(excludedErrors(filepath.Base(dir), p.name)) == 0 {
				want++
			}
		}
	}
	for _, x := range roundTripExclusions {
		if _, err := os.Stat(filepath.Join("testdata", x.dir)); err != nil {
			t.Errorf("exclusion %s: %v", x.dir, err)
		}
	}
	checked := 0
	for _, dir := range dirs {
		base := workloads(t, readInput(t, dir))
		for _, p := range pairs {
			t.Run(filepath.Base(dir)+"/"+p.name, func(t *testing.T) {
				in := withProfiles(t, base, p.a, p.b)
				out, err := run(t, in)
				excluded := excludedErrors(filepath.Base(dir), p.name)
				switch {
				case err != nil && len(excluded) == 0:
					t.Fatalf("the corpus input cannot take both profiles: %v", err)
				case err != nil:
					if unlisted, missing := unlistedErrors(err, excluded); len(unlisted)+len(missing) > 0 {
						t.Fatalf("excluded for the errors %q, the run fails with others: %q (and not with %q)", excluded, unlisted, missing)
					}
					return
				case len(excluded) > 0:
					t.Fatalf("excluded for the errors %q, the run passes: take it off roundTripExclusions", excluded)
				}
				checked++
				again, err := run(t, withoutResults(t, out))
				if err != nil {
					t.Fatalf("a second run: %v", err)
				}
				if got, want := items(t, again), items(t, out); got != want {
					t.Errorf("a second run changed the items:\n%s", got)
				}
				if bytes.Contains(base, []byte("sidecar.kinject.dev/status")) {
					return
				}
				for _, only := range []struct{ removed, kept, keptName string }{{p.aProfile, p.b, p.bProfile}, {p.bProfile, p.a, p.aProfile}} {
					removed, err := run(t, withConfig(t, withoutResults(t, out), uninjectProfile(only.removed)))
					if err != nil {
						t.Fatalf("uninject %q: %v\n%s", only.removed, err, removed)
					}
					alone, err := run(t, withProfiles(t, base, only.kept))
					if err != nil {
						t.Fatalf("inject %q alone: %v", only.keptName, err)
					}
					if got, want := workloadItems(t, removed), workloadItems(t, alone); got != want {
						t.Errorf("uninject %q from both != inject %q alone:\n--- got\n%s\n--- want\n%s", only.removed, only.keptName, got, want)
					}
				}
				back, err := run(t, withConfig(t, withoutResults(t, out), uninjectAll))
				if err != nil {
					t.Fatalf("uninject all profiles: %v\n%s", err, back)
				}
				if got, want := items(t, back), items(t, in); got != want {
					t.Errorf("uninject all profiles != input:\n--- got\n%s\n--- want\n%s", got, want)
				}
			})
		}
	}
	t.Logf("%d of %d runs injected both profiles, %d excluded", checked, len(dirs)*len(pairs), len(dirs)*len(pairs)-want)
	if checked != want || checked*2 < len(dirs)*len(pairs) {
		// Most of the corpus must take both profiles, or the test proves little.
		t.Errorf("%d of %d runs injected both profiles, want %d", checked, len(dirs)*len(pairs), want)
	}
}

// TestProfileGoldensAgree holds the profile goldens to what they show:
// removing a profile gives what injecting only the other gives, removing
// all gives the input, an upgrade of one profile leaves the other's lines
// alone, and a configPath among the items keeps the items' order.
func TestProfileGoldensAgree(t *testing.T) {
	expected := func(c string) []byte { return readFile(t, filepath.Join("testdata", c, "expected.yaml")) }
	input := func(c string) []byte { return readFile(t, filepath.Join("testdata", c, "input.yaml")) }
	stripLogs := func(rl []byte) string {
		out, err := run(t, withConfig(t, withoutResults(t, rl), uninjectProfile("logs")))
		if err != nil {
			t.Fatalf("uninject logs: %v", err)
		}
		return workloadItems(t, out)
	}
	for _, c := range []struct {
		name      string
		got, want func() string
	}{
		{"uninject mesh == logs only", func() string { return workloadItems(t, expected("profiles-uninject-mesh")) }, func() string { return workloadItems(t, expected("profiles-logs-only")) }},
		{"uninject all == input", func() string { return items(t, expected("profiles-uninject-all")) }, func() string { return items(t, input("profiles-two")) }},
		{"upgrade leaves mesh alone", func() string { return stripLogs(expected("profiles-upgrade")) }, func() string { return stripLogs(input("profiles-upgrade")) }},
		{"upgrade == fresh injection", func() string { return workloadItems(t, expected("profiles-upgrade")) }, func() string {
			fresh, err := run(t, withProfiles(t, workloads(t, input("profiles-two")), sidecarInjections(t, parse(t, input("profiles-upgrade")))...))
			if err != nil {
				t.Fatalf("inject the upgraded profiles: %v", err)
			}
			return workloadItems(t, fresh)
		}},
		{"configPath keeps the order", func() string { return items(t, expected("profiles-configpath")) }, func() string { return items(t, expected("profiles-two")) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, want := c.got(), c.want(); got != want {
				t.Errorf("--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// uninjectProfile is the function config of
// `kpt fn eval -- uninject=true profile=NAME` ("" is the default profile).
func uninjectProfile(profile string) string {
	s := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\ndata:\n  uninject: \"true\"\n"
	if profile != "" {
		s += "  profile: " + profile + "\n"
	}
	return s
}

// uninjectAll is the function config of
// `kpt fn eval -- uninject=true allProfiles=true`.
const uninjectAll = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\ndata:\n  uninject: \"true\"\n  allProfiles: \"true\"\n"

// workloads is a ResourceList's items without its SidecarInjections, and
// without function config or results.
func workloads(t *testing.T, rl []byte) []byte {
	t.Helper()
	return withProfiles(t, rl)
}

// withProfiles puts the SidecarInjections first among the items of rl, in
// place of any it had, and drops the function config and the results, so
// that the profiles configure the run.
func withProfiles(t *testing.T, rl []byte, profiles ...string) []byte {
	t.Helper()
	n := parse(t, rl)
	var list []*yaml.Node
	for _, p := range profiles {
		list = append(list, parse(t, []byte(p)).YNode())
	}
	if f := n.Field("items"); f != nil {
		for _, item := range f.Value.YNode().Content {
			if !isSidecarInjection(yaml.NewRNode(item)) {
				list = append(list, item)
			}
		}
	}
	// One filter at a time: PipeE hands each filter the previous one's result.
	for _, f := range []yaml.Filter{yaml.SetField("items", yaml.NewRNode(&yaml.Node{Kind: yaml.SequenceNode, Content: list})), yaml.Clear("functionConfig"), yaml.Clear("results")} {
		if err := n.PipeE(f); err != nil {
			t.Fatal(err)
		}
	}
	return []byte(n.MustString())
}

// sidecarInjections returns the SidecarInjections among the items, as text.
func sidecarInjections(t *testing.T, rl *yaml.RNode) []string {
	t.Helper()
	var out []string
	if f := rl.Field("items"); f != nil {
		for _, item := range f.Value.YNode().Content {
			if n := yaml.NewRNode(item); isSidecarInjection(n) {
				out = append(out, n.MustString())
			}
		}
	}
	return out
}

// workloadItems is items without the SidecarInjections.
func workloadItems(t *testing.T, rl []byte) string {
	t.Helper()
	return items(t, workloads(t, rl))
}

func isSidecarInjection(n *yaml.RNode) bool {
	return n.YNode().Kind == yaml.MappingNode && n.GetKind() == inject.ConfigKind
}

func parse(t *testing.T, b []byte) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFileModeProfiles: a config file of SidecarInjections is one profile
// each in file mode too. Each report line names its profile, the edited
// file keeps every other byte, and --uninject takes both profiles out.
func TestFileModeProfiles(t *testing.T) {
	write := tempWriter(t)
	main := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := processor.Main(args, strings.NewReader(""), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	app := write("app.yaml", appYAML)
	cfg := write("profiles.yaml", meshProfile+"---\n"+logsProfile)
	injected, report, code := main(cfg, app)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, report)
	}
	for _, want := range []string{app + `: deployment.apps/web injected (profile "mesh")`, app + `: deployment.apps/web injected (profile "logs")`} {
		if !strings.Contains(report, want+"\n") {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, want := range []string{"mesh.sidecar.kinject.dev/status", "logs.sidecar.kinject.dev/status", "- name: envoy", "- name: log-shipper", "        - name: web   # four-space lists survive\n"} {
		if !strings.Contains(injected, want) {
			t.Errorf("output lacks %q:\n%s", want, injected)
		}
	}
	if again, _, _ := main(cfg, write("injected.yaml", injected)); again != injected {
		t.Errorf("second run changed the output:\n%s", again)
	}
	if restored, _, code := main("--uninject", cfg, write("injected2.yaml", injected)); code != 0 || restored != appYAML {
		t.Errorf("uninject (exit %d) did not restore the input byte for byte:\n%s", code, restored)
	}
	if _, report, code := main(write("twice.yaml", meshProfile+"---\n"+meshProfile), app); code == 0 || !strings.Contains(report, `profile "mesh" is configured by both`) {
		t.Errorf("a profile configured twice: exit %d, %q", code, report)
	}
}
