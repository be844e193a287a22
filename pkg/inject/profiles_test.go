package inject_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// profileCase is one directory under testdata/profiles: config.yaml holds
// one configuration per document, each a profile, injected in order;
// input.yaml; and the expectations expected.yaml, report.txt and, for each
// profile, uninject-PROFILE.yaml (PROFILE "default" for the default one).
type profileCase struct {
	name, dir string
	profiles  []*inject.Injector
	input     []byte
}

func loadProfileCases(t testing.TB) []profileCase {
	var cases []profileCase
	for _, dir := range caseDirs(t, "testdata/profiles/*") {
		c := profileCase{name: filepath.Base(dir), dir: dir}
		c.profiles = profileInjectors(t, readFile(t, filepath.Join(dir, "config.yaml")))
		c.input = readFile(t, filepath.Join(dir, "input.yaml"))
		cases = append(cases, c)
	}
	return cases
}

// profileInjectors builds one injector per document of a config stream; a
// document without a template uses the embedded default.
func profileInjectors(t testing.TB, data []byte) []*inject.Injector {
	t.Helper()
	var out []*inject.Injector
	err := manifest.Process(bytes.NewReader(data), &bytes.Buffer{}, func(i int, doc []byte) []byte {
		node, err := yaml.Parse(string(doc))
		if err != nil {
			t.Fatalf("config document %d: %v", i, err)
		}
		cfg, err := inject.LoadConfig(node, nil)
		if err != nil {
			t.Fatalf("config document %d: %v", i, err)
		}
		tpl := cfg.Template
		if tpl == nil {
			tpl = inject.DefaultTemplate()
		}
		in, err := inject.New(tpl, cfg.Settings)
		if err != nil {
			t.Fatalf("config document %d: %v", i, err)
		}
		out = append(out, in)
		return doc
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// injectAll injects the profiles in order.
func injectAll(t testing.TB, profiles []*inject.Injector, src []byte) ([]byte, inject.Report) {
	t.Helper()
	var report inject.Report
	for _, in := range profiles {
		var r inject.Report
		src, r = run(t, in, inject.OpInject, src)
		report = append(report, r...)
	}
	return src, report
}

func profileLabel(in *inject.Injector) string {
	if in.Profile() == "" {
		return "default"
	}
	return in.Profile()
}

func TestProfilesGolden(t *testing.T) {
	for _, c := range loadProfileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var text strings.Builder
			out := c.input
			for _, in := range c.profiles {
				var r inject.Report
				out, r = run(t, in, inject.OpInject, out)
				fmt.Fprintf(&text, "# %s\n%s", profileLabel(in), reportText(r))
			}
			checkGolden(t, filepath.Join(c.dir, "expected.yaml"), out)
			checkGolden(t, filepath.Join(c.dir, "report.txt"), []byte(text.String()))
			if len(c.profiles) == 1 {
				_, report := run(t, c.profiles[0], inject.OpInject, c.input)
				checkProperties(t, c.profiles[0], c.input, out, report)
			}
			checkProfileProperties(t, c.profiles, c.input, out, func(name string, got []byte) {
				checkGolden(t, filepath.Join(c.dir, "uninject-"+name+".yaml"), got)
			})
		})
	}
}

// checkProfileProperties checks what several profiles injected into one
// input must satisfy: injecting again changes nothing; uninjecting one
// profile equals, byte for byte, injecting only the others (in the same
// order); uninjecting every profile gives the input back.
func checkProfileProperties(t *testing.T, profiles []*inject.Injector, input, out []byte, uninjected func(string, []byte)) {
	t.Helper()
	if again, r := injectAll(t, profiles, out); !bytes.Equal(again, out) || r.Changed() {
		t.Errorf("injecting the profiles again changed the output:\n%s", again)
	}
	clean := !bytes.Contains(input, []byte(".dev/status"))
	// A profile refused for a conflict with an earlier one would be
	// injected without it: then only the round trips below hold.
	_, report := injectAll(t, profiles, input)
	exclusive := true
	for _, e := range report {
		exclusive = exclusive && e.Reason != inject.ReasonConflict
	}
	for i, in := range profiles {
		back, _ := run(t, in, inject.OpUninject, out)
		if uninjected != nil {
			uninjected(profileLabel(in), back)
		}
		if !clean || !exclusive {
			continue
		}
		rest := append(append([]*inject.Injector{}, profiles[:i]...), profiles[i+1:]...)
		want, _ := injectAll(t, rest, input)
		if !bytes.Equal(back, want) {
			t.Errorf("uninject of profile %s != injecting only the others:\n%s\nwant:\n%s", profileLabel(in), back, want)
		}
	}
	all, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if back, _ := run(t, all, inject.OpUninjectAll, out); clean && !bytes.Equal(back, input) {
		t.Errorf("uninject of every profile != input:\n%s\nwant:\n%s", back, input)
	}
}

// logsProfile is a second sidecar for the corpus properties: a log shipper
// with its own volume, label, annotation and override, in classic or native
// form.
func logsProfile(t testing.TB, native bool) *inject.Injector {
	t.Helper()
	cfg, err := inject.ParseConfig([]byte(fmt.Sprintf(`apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: logs
spec:
  profile: logs
  native: %v
  template:
    containers:
    - name: log-shipper
      image: fluent/fluent-bit:3.2
      resources:
        requests:
          cpu: 10m
      volumeMounts:
      - name: varlog
        mountPath: /var/log/app
    volumes:
    - name: varlog
      emptyDir: {}
    metadata:
      labels:
        logging.example.com/enabled: "true"
      annotations:
        logging.example.com/format: json
    parameters:
    - annotation: cpu-request
      field: containers[log-shipper].resources.requests.cpu
      type: quantity
`, native)), nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestProfilesCorpus runs two profiles, in both orders, over every input of
// the golden corpus.
func TestProfilesCorpus(t *testing.T) {
	envoy, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string][]*inject.Injector{
		"envoy+logs":        {envoy, logsProfile(t, false)},
		"logs+envoy":        {logsProfile(t, false), envoy},
		"envoy+logs-native": {envoy, logsProfile(t, true)},
		"logs-native+envoy": {logsProfile(t, true), envoy},
	}
	checked := 0
	for _, c := range loadGoldenCases(t) {
		for name, profiles := range pairs {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				out, report := injectAll(t, profiles, c.input)
				for _, e := range report {
					if e.Action == inject.Failed && e.Reason == inject.ReasonConflict && strings.Contains(e.Message, "profile") {
						t.Errorf("corpus profiles do not share names, yet: %s", e)
					}
				}
				checkProfileProperties(t, profiles, c.input, out, nil)
				checked++
			})
		}
	}
	if checked < 4*30 {
		t.Errorf("only %d corpus runs", checked)
	}
}

// TestProfileUpgradeLeavesOthers: upgrading one profile changes no line of
// the other's: removing the upgraded profile before and after the upgrade
// gives the same bytes.
func TestProfileUpgradeLeavesOthers(t *testing.T) {
	const dir = "testdata/profiles/upgrade"
	profiles := profileInjectors(t, readFile(t, filepath.Join(dir, "config.yaml")))
	input := readFile(t, filepath.Join(dir, "input.yaml"))
	upgraded, report := injectAll(t, profiles, input)
	if !report.Changed() {
		t.Fatal("the upgrade changed nothing")
	}
	logs := profiles[1]
	before, _ := run(t, logs, inject.OpUninject, input)
	after, _ := run(t, logs, inject.OpUninject, upgraded)
	if !bytes.Equal(before, after) {
		t.Errorf("the default profile's lines changed with the upgrade of logs:\n%s\nwant:\n%s", after, before)
	}
	for _, line := range changedLines(string(input), string(upgraded)) {
		if strings.Contains(line, "envoy") && !strings.Contains(line, "logs.sidecar.kinject.dev/status") {
			t.Errorf("the upgrade of logs changed the line %q", line)
		}
	}
}

// FuzzProfiles checks the promises of profiles on arbitrary documents: two
// profiles (the embedded Envoy and a log shipper, classic or native) in
// either order are idempotent; uninjecting one equals injecting only the
// other; uninjecting every profile gives the document back.
func FuzzProfiles(f *testing.F) {
	addGoldenSeeds(f)
	envoy, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		f.Fatal(err)
	}
	all, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		f.Fatal(err)
	}
	logs := []*inject.Injector{logsProfile(f, false), logsProfile(f, true)}
	f.Fuzz(func(t *testing.T, doc []byte, which uint8) {
		a, b := envoy, logs[int(which)%2]
		if which&2 != 0 {
			a, b = b, a
		}
		inject1 := func(in *inject.Injector, src []byte) ([]byte, inject.Report) {
			out, entries := in.ProcessText(inject.OpInject, src, 0)
			return out, inject.Report(entries)
		}
		onlyA, ra := inject1(a, doc)
		both, rb := inject1(b, onlyA)
		if reformattedAny(ra) || reformattedAny(rb) {
			return
		}
		if again, r := inject1(b, both); !bytes.Equal(again, both) || r.Changed() {
			t.Fatalf("not idempotent:\n%s\n---- again:\n%s", both, again)
		}
		if again, r := inject1(a, both); !bytes.Equal(again, both) || r.Changed() {
			t.Fatalf("the first profile is not current after the second:\n%s\n---- again:\n%s", both, again)
		}
		if bytes.Contains(doc, []byte(".dev/status")) {
			return
		}
		for _, e := range rb {
			if e.Reason == inject.ReasonConflict {
				return
			}
		}
		onlyB, _ := inject1(b, doc)
		if back, _ := b.ProcessText(inject.OpUninject, both, 0); !bytes.Equal(back, onlyA) {
			t.Fatalf("uninject of the second profile != the first alone:\n%s\nwant:\n%s", back, onlyA)
		}
		if back, _ := a.ProcessText(inject.OpUninject, both, 0); !bytes.Equal(back, onlyB) {
			// A document that mixes indentation widths, or indents block
			// mappings by other than two and shows no block sequence, does
			// not fix the style of what is added: the second profile's
			// lines follow the first one's, which stay a style the second
			// would not have chosen alone. The objects must still be the
			// same.
			if !(mixedIndentation(doc) || scarceIndentation(doc)) || !sameDocuments(t, back, onlyB) {
				t.Fatalf("uninject of the first profile != the second alone:\n%s\nwant:\n%s", back, onlyB)
			}
		}
		if back, _ := all.ProcessText(inject.OpUninjectAll, both, 0); !bytes.Equal(back, doc) {
			t.Fatalf("uninject of every profile != the document:\n%q\nwant:\n%q", back, doc)
		}
	})
}

// scarceIndentation reports whether a block document indents its
// mappings by other than two spaces and writes no block sequence: nothing
// in it shows how sequences are indented (the documented exception).
func scarceIndentation(doc []byte) bool {
	if hasBlockSequence(doc) || bytes.HasPrefix(bytes.TrimSpace(doc), []byte("{")) {
		return false
	}
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if strings.TrimSpace(trimmed) == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if indent := len(line) - len(trimmed); indent > 0 {
			return indent != 2
		}
	}
	return false
}

// hasBlockSequence reports whether a document writes a block sequence
// ("- item" on a line), which shows how it indents sequences.
func hasBlockSequence(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if t := strings.TrimLeft(line, " "); t == "-" || strings.HasPrefix(t, "- ") {
			return true
		}
	}
	return false
}

// mixedIndentation reports whether a document indents its blocks by more
// than one width (a mapping's fields 3 deeper here, 2 there).
func mixedIndentation(doc []byte) bool {
	widths := map[int]bool{}
	prev := -1
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if strings.TrimSpace(trimmed) == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(trimmed)
		if prev >= 0 && indent > prev {
			widths[indent-prev] = true
		}
		prev = indent
	}
	return len(widths) > 1
}

// TestNativeSidecarsKeepTheirOrder: a native sidecar goes before the
// app's own init containers and after the sidecars other profiles added
// there first, so that it starts after them.
func TestNativeSidecarsKeepTheirOrder(t *testing.T) {
	t.Parallel()
	envoy, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n  - {name: setup, image: busybox}\n  containers:\n  - {name: app, image: busybox}\n")
	out, report := injectAll(t, []*inject.Injector{logsProfile(t, true), envoy}, src)
	if len(report) != 2 || report[0].Action != inject.Injected || report[1].Action != inject.Injected {
		t.Fatalf("%v", report)
	}
	pod, err := yaml.Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	inits, err := pod.Pipe(yaml.Lookup("spec", "initContainers"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := inits.ElementValues("name")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(names, ","), "log-shipper,envoy,setup"; got != want {
		t.Errorf("init containers %s, want %s", got, want)
	}
}
