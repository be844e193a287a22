package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
)

// options are the command line flags.
type options struct {
	out              string
	binDir           string
	ns               []int
	kustomizeNs      []int
	liveNs           []int
	smallRuns        int
	bigRuns          int
	kustomizeBig     int
	kustomizeNoopMax int
	startupRuns      int
	loopSample       int
	skipCore         bool
	skipKustomize    bool
	skipStartup      bool
	skipLive         bool
	skipProfile      bool
	skipAdmission    bool
	skipStatus       bool
	skipOverrides    bool
	admissionPods    int
	admissionRounds  int
	admissionWorkers int
	// admissionBaseline is a policy file run as its own side (sideBaseline).
	admissionBaseline string
	statusDeployments int
	statusRounds      int
	skipRestart       bool
	// restart part: Deployments restarted, the kubectl loop's sample, waves
	restartDeployments int
	restartLoopSample  int
	restartMaxInFlight int
	keep               bool
	// computed part: app counts, and another build's bin/ run beside this one
	computedNs   []int
	skipComputed bool
	before       string
	// in-place part: the fleet (Deployments of replicas Pods) and
	// restart's --max-in-flight
	skipInplace        bool
	inplaceDeployments int
	inplaceReplicas    int
	inplaceMaxInFlight int
}

// env is what every part shares.
type env struct {
	opts       options
	tmp        string
	plugin     string // kubectl-inject (serves --local, hands the rest to pluginLive)
	pluginLive string // kinject-live (beside kubectl-inject)
	fn         string // inject-fn
	floor      string
	kyamlrt    string
	before     string // the -before build's programs, staged; "" when none
	report     *report
	inputs     map[int]string // N -> multi-document stream
	rlInputs   map[int]string // N -> the same documents as a ResourceList
	coreCLI    map[int]sample // N -> kubectl-inject --local, for later comparisons
	inplaceRes *inplaceResult // part 11, rendered after the report's sections
}

// main parses the flags and runs the parts; any error ends the program
// with status 1.
func main() {
	// What runs the core in this process evaluates with cel-go here, as
	// kinject-live does.
	podexpr.Use(celgo.Compile)
	var o options
	var ns, kns, lns, cns string
	flag.StringVar(&o.out, "out", "", "write the Markdown report to this file (stdout always gets the tables)")
	flag.StringVar(&o.binDir, "bin", "bin", "directory holding kubectl-inject and inject-fn (make build)")
	flag.StringVar(&ns, "ns", "100,1000,10000", "app counts for the core part (each app: Deployment + Service + ConfigMap)")
	flag.StringVar(&kns, "kustomize-ns", "100,1000", "app counts for the kustomize part (kustomize grows superlinearly: keep <= 1000)")
	flag.StringVar(&lns, "live-ns", "100,1000", "Deployment counts for the live part")
	flag.IntVar(&o.smallRuns, "runs", 5, "runs per measurement for N <= 1000 (the median is reported)")
	flag.IntVar(&o.bigRuns, "big-runs", 2, "runs per measurement for N > 1000")
	flag.IntVar(&o.kustomizeBig, "kustomize-big-runs", 1, "runs per kustomize measurement for N >= 1000")
	flag.IntVar(&o.kustomizeNoopMax, "kustomize-noop-max", 100, "also time kustomize with a no-op exec function (the control) up to this N")
	flag.IntVar(&o.startupRuns, "startup-runs", 31, "runs per program for the start-up part")
	flag.IntVar(&o.loopSample, "loop-sample", 200, "kubectl patch loop: patch at most this many Deployments and extrapolate linearly")
	flag.BoolVar(&o.skipCore, "skip-core", false, "skip part 1 (core throughput vs the floor)")
	flag.BoolVar(&o.skipKustomize, "skip-kustomize", false, "skip part 2 (kustomize)")
	flag.BoolVar(&o.skipStartup, "skip-startup", false, "skip part 3 (function start-up)")
	flag.BoolVar(&o.skipLive, "skip-live", false, "skip part 4 (live kube-apiserver)")
	flag.BoolVar(&o.skipProfile, "skip-profile", false, "skip part 5 (CPU profile)")
	flag.BoolVar(&o.skipAdmission, "skip-admission", false, "skip part 6 (admission policy on a live kube-apiserver)")
	flag.IntVar(&o.admissionPods, "admission-pods", 1000, "Pods created per admission run")
	flag.IntVar(&o.admissionRounds, "admission-rounds", 3, "admission runs with and without the policy, interleaved (the median is reported)")
	flag.IntVar(&o.admissionWorkers, "admission-workers", 8, "concurrent Pod creations in the admission part")
	flag.StringVar(&o.admissionBaseline, "admission-baseline", "", "admission part: also run this policy file (kubectl inject policy's output of another version, say) as a side of every round, and compare it with the compiled policy")
	flag.BoolVar(&o.skipStatus, "skip-status", false, "skip part 7 (kubectl inject status -A against kubectl get on a live kube-apiserver)")
	flag.BoolVar(&o.skipOverrides, "skip-overrides", false, "skip part 8 (profiles and override annotations against plain injection)")
	flag.IntVar(&o.statusDeployments, "status-deployments", 1000, "Deployments of the status part (3 Pods each, half of them injected)")
	flag.IntVar(&o.statusRounds, "status-rounds", 5, "status part: runs of each command, interleaved (the median is reported)")
	flag.BoolVar(&o.skipRestart, "skip-restart", false, "skip part 9 (kubectl inject restart against a kubectl rollout loop, on a control plane)")
	flag.IntVar(&o.restartDeployments, "restart-deployments", 200, "restart part: outdated one-Pod Deployments restarted by kubectl inject restart")
	flag.IntVar(&o.restartLoopSample, "restart-loop-sample", 50, "restart part: Deployments the kubectl rollout restart + status loop handles (its figures are per Deployment)")
	flag.IntVar(&o.restartMaxInFlight, "restart-max-in-flight", 3, "restart part: --max-in-flight of kubectl inject restart")
	flag.BoolVar(&o.skipComputed, "skip-computed", false, "skip part 10 (the computed default against the floor and a fixed port; start-up)")
	flag.StringVar(&cns, "computed-ns", "1000,5000", "app counts for part 10")
	flag.StringVar(&o.before, "before", "", "part 10: also run kubectl-inject and inject-fn from this directory (another build) in the same rounds")
	flag.BoolVar(&o.skipInplace, "skip-inplace", false, "skip part 11 (kubectl inject restart upgrading a fleet in place against kubectl rollout restart, on a control plane)")
	flag.IntVar(&o.inplaceDeployments, "inplace-deployments", 10, "part 11: Deployments of the fleet")
	flag.IntVar(&o.inplaceReplicas, "inplace-replicas", 100, "part 11: replicas of each Deployment")
	flag.IntVar(&o.inplaceMaxInFlight, "inplace-max-in-flight", 100, "part 11: --max-in-flight of kubectl inject restart (workloads and Pods being upgraded at once)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory")
	flag.Parse()
	if o.admissionPods <= 0 || o.admissionRounds <= 0 || o.admissionWorkers <= 0 {
		fatal(fmt.Errorf("-admission-pods, -admission-rounds and -admission-workers must be positive"))
	}
	if o.restartDeployments <= 0 || o.restartLoopSample <= 0 || o.restartMaxInFlight <= 0 {
		fatal(fmt.Errorf("-restart-deployments, -restart-loop-sample and -restart-max-in-flight must be positive"))
	}
	if o.inplaceDeployments <= 0 || o.inplaceReplicas <= 0 || o.inplaceMaxInFlight <= 0 {
		fatal(fmt.Errorf("-inplace-deployments, -inplace-replicas and -inplace-max-in-flight must be positive"))
	}
	if o.statusDeployments < 2 || o.statusRounds <= 0 {
		fatal(fmt.Errorf("-status-deployments must be at least 2 and -status-rounds positive"))
	}
	var err error
	for _, p := range []struct {
		s   string
		dst *[]int
	}{{ns, &o.ns}, {kns, &o.kustomizeNs}, {lns, &o.liveNs}, {cns, &o.computedNs}} {
		if *p.dst, err = parseInts(p.s); err != nil {
			fatal(err)
		}
	}
	if err := mainErr(o); err != nil {
		fatal(err)
	}
}

// fatal prints err and exits with status 1.
func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// parseInts parses a comma-separated list of positive counts ("1_000" is
// allowed).
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// mainErr sets up, runs every part not skipped in order and writes the
// report.
func mainErr(o options) error {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "kinject-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "bench: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	e := &env{opts: o, tmp: tmp, report: newReport(), inputs: map[int]string{}, rlInputs: map[int]string{}, coreCLI: map[int]sample{}}
	if err := e.setup(); err != nil {
		return err
	}
	parts := []struct {
		skip bool
		name string
		fn   func() error
	}{
		{o.skipCore, "core", e.core},
		{o.skipKustomize, "kustomize", e.kustomize},
		{o.skipStartup, "startup", e.startup},
		{o.skipLive, "live", e.live},
		{o.skipProfile, "profile", e.profile},
		{o.skipAdmission, "admission", e.admission},
		{o.skipStatus, "status", e.status},
		{o.skipOverrides, "overrides", e.overrides},
		{o.skipRestart, "restart", e.restart},
		{o.skipComputed, "computed", e.computed},
		{o.skipInplace, "inplace", e.inplace},
	}
	for _, p := range parts {
		if p.skip {
			continue
		}
		t := time.Now()
		logf("== %s", p.name)
		if err := p.fn(); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		logf("== %s done in %s", p.name, time.Since(t).Round(time.Second))
	}
	e.report.total = time.Since(start)
	md := e.report.markdown(e) + inplaceSection(e.inplaceRes)
	fmt.Print(md)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			return err
		}
		logf("wrote %s", o.out)
	}
	return nil
}

// logf logs a progress line to stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// setup finds bin/ and builds the helper programs, unless only parts that
// need neither run.
func (e *env) setup() error {
	bin, err := filepath.Abs(e.opts.binDir)
	if err != nil {
		return err
	}
	e.plugin = filepath.Join(bin, "kubectl-inject")
	e.pluginLive = filepath.Join(bin, "kinject-live")
	e.fn = filepath.Join(bin, "inject-fn")
	if o := e.opts; o.skipCore && o.skipKustomize && o.skipStartup && o.skipLive && o.skipStatus && o.skipOverrides && o.skipRestart && o.skipComputed && o.skipInplace {
		return nil // the profile and admission parts run no binary of bin/
	}
	// kinject-cel beside kubectl-inject and inject-fn: they run it for
	// expressions beyond the core's subset.
	for _, p := range []string{e.plugin, e.pluginLive, e.fn, filepath.Join(bin, "kinject-cel")} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%v (run make build first, or pass -bin)", err)
		}
	}
	built := filepath.Join(e.tmp, "built")
	e.floor = filepath.Join(built, "floor")
	e.kyamlrt = filepath.Join(built, "kyamlrt")
	launcher = filepath.Join(e.tmp, "rusage")
	for _, b := range []struct{ out, pkg string }{{e.floor, "./hack/bench/floor"}, {e.kyamlrt, "./hack/bench/kyamlrt"}, {launcher, "./hack/bench/rusage"}} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", b.out, b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", b.pkg, err)
		}
	}
	// Every program measured runs from a copy in the temporary directory,
	// all written the same way: how soon a program starts depends on how
	// its file sits in the page cache. Here three files with the same bytes
	// (as make build wrote it, built again elsewhere, copied) started up to
	// 0.7 ms apart, and the gap was gone once the cache was dropped;
	// start-up ratios between programs with different histories measured
	// that, not the programs.
	programs := filepath.Join(e.tmp, "programs")
	staged, err := stage(programs, e.plugin, e.pluginLive, e.fn, filepath.Join(bin, "kinject-cel"), e.floor, e.kyamlrt)
	if err != nil {
		return err
	}
	e.plugin, e.pluginLive, e.fn, e.floor, e.kyamlrt = staged[0], staged[1], staged[2], staged[4], staged[5]
	if b := e.opts.before; b != "" {
		before := filepath.Join(e.tmp, "before")
		if _, err := stage(before, filepath.Join(b, "kubectl-inject"), filepath.Join(b, "kinject-live"), filepath.Join(b, "inject-fn"), filepath.Join(b, "kinject-cel")); err != nil {
			return fmt.Errorf("-before: %w", err)
		}
		e.before = before
	}
	return nil
}

// stage copies each program into dir under its own name (kubectl-inject
// runs kinject-live and kinject-cel from beside it) and returns the
// copies' paths.
func stage(dir string, programs ...string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := make([]string, len(programs))
	for i, p := range programs {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out[i] = filepath.Join(dir, filepath.Base(p))
		if err := os.WriteFile(out[i], data, 0o755); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// genApps is the generator's stream of n apps (pkg/manifest/gen).
func genApps(n int) ([]byte, error) {
	var buf bytes.Buffer
	if err := gen.Write(&buf, n); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// input returns the path of a generated stream of n apps.
func (e *env) input(n int) (string, error) {
	return e.generated(e.inputs, n, "apps-%d.yaml", func(src []byte) []byte { return src })
}

// rlInput returns the same documents as input(n) as the items of a
// ResourceList, without function config (inject-fn then uses its embedded
// default template).
func (e *env) rlInput(n int) (string, error) {
	return e.generated(e.rlInputs, n, "apps-%d.rl.yaml", func(src []byte) []byte { return wrapResourceList(splitDocs(src)) })
}

// generated writes form(the stream of n apps) once to the temporary file
// named by the format name and n, and returns its path, remembered in
// cache.
func (e *env) generated(cache map[int]string, n int, name string, form func([]byte) []byte) (string, error) {
	if p, ok := cache[n]; ok {
		return p, nil
	}
	src, err := genApps(n)
	if err != nil {
		return "", err
	}
	p := filepath.Join(e.tmp, fmt.Sprintf(name, n))
	if err := os.WriteFile(p, form(src), 0o644); err != nil {
		return "", err
	}
	cache[n] = p
	return p, nil
}

// splitDocs splits a stream at "---" lines, dropping empty documents.
func splitDocs(src []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "---") && strings.TrimSpace(line) == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return docs
}

// wrapResourceList makes a ResourceList of docs by indenting them as items:
// the first content line of each document gets "- ", every other line two
// spaces (comments and block scalars stay valid).
func wrapResourceList(docs [][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, d := range docs {
		first := true
		for _, line := range strings.SplitAfter(string(d), "\n") {
			if line == "" {
				continue
			}
			t := strings.TrimSpace(line)
			switch {
			case t == "":
				b.WriteString("\n")
			case first && !strings.HasPrefix(t, "#"):
				b.WriteString("- " + line)
				first = false
			default:
				b.WriteString("  " + line)
			}
		}
	}
	return b.Bytes()
}

// countEnvoy counts injected sidecars in a file (image lines).
func countEnvoy(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return bytes.Count(b, []byte("image: envoyproxy/envoy:")), nil
}

// runsFor is the number of runs per measurement at N = n.
func (e *env) runsFor(n int) int {
	if n <= 1000 {
		return e.opts.smallRuns
	}
	return e.opts.bigRuns
}

// goVersion is what go version prints (the running Go's version when it
// cannot run).
func goVersion() string {
	out, err := exec.Command("go", "version").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}
