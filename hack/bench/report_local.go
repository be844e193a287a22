package main

import (
	"fmt"
	"time"
)

// The sections of the parts that run no API server: 1. core, 2. kustomize,
// 3. start-up and 5. profile.

// coreSection is section 1 and the goals of the core.
func (r *report) coreSection(e *env) string {
	if len(r.core) == 0 {
		return ""
	}
	b, p := printer()
	p("## 1. Core throughput vs the floor\n\n")
	p("**Floor** (`hack/bench/floor`): a streaming no-op, one document at a time, yaml.v3\n")
	p("Decoder into `yaml.Node` and a fresh Encoder per document. **kubectl-inject** runs\n")
	p("`kubectl-inject --local -f FILE` (stdout the YAML, stderr one line per object).\n\n")
	t := &table{head: []string{"N apps", "docs", "input", "runs", "floor", "floor RSS", "--local", "--local RSS",
		"time / floor", "memory / floor", "anonymous memory / floor", "--local µs/doc"}}
	timeOK, memOK := true, true
	worstT, worstM := 0.0, 0.0
	for _, c := range r.core {
		tr, mr := c.CLI.Seconds()/c.Floor.Seconds(), c.CLI.MB()/c.Floor.MB()
		worstT, worstM = max(worstT, tr), max(worstM, mr)
		timeOK = timeOK && tr <= 1.0
		memOK = memOK && mr <= 2.0
		t.add(commas(c.N), commas(c.Docs), mb(c.InputBytes), fmt.Sprint(c.Runs), secs(c.Floor.Wall), mb(c.Floor.MaxRSS),
			secs(c.CLI.Wall), mb(c.CLI.MaxRSS), ratio(c.CLI.Seconds(), c.Floor.Seconds()), ratio(c.CLI.MB(), c.Floor.MB()),
			fmt.Sprintf("%s (%s / %s)", ratio(c.CLI.AnonMB(), c.Floor.AnonMB()), mb(c.CLI.AnonRSS), mb(c.Floor.AnonRSS)),
			fmt.Sprintf("%.1f", c.CLI.Seconds()*1e6/float64(c.Docs)))
	}
	p("%s\n", t)
	p("Memory is the peak RSS (`Maxrss`), which counts the pages of the program's binary as well\n")
	p("as its heap: the kernel maps them in runs around each page touched, so most of a binary is\n")
	p("resident soon after it starts (the floor's is %s, kubectl-inject's %s, kyaml's\n", mb(fileSize(e.floor)), mb(fileSize(e.plugin)))
	p("dependencies most of it). *Anonymous memory* is the peak of the rest (heap, stacks, the\n")
	p("runtime: `RssAnon`, sampled every millisecond), what a longer stream costs.\n\n")
	if st := r.startup; st != nil && len(r.core) > 0 {
		first := r.core[0]
		extra := st.KyamlNoop.Wall - st.Floor.Wall
		perDoc := func(s sample, startup time.Duration, docs int) float64 {
			return float64(s.Wall-startup) / 1e3 / float64(docs)
		}
		p("Start-up against work: a program that only links kyaml (the core's YAML library) and\n")
		p("exits starts %s later than the floor (section 3): %.0f%% of the floor's whole run at\n", secs(extra), 100*extra.Seconds()/first.Floor.Seconds())
		p("N = %s. Without start-up, --local takes %.1f µs per document there and the floor %.1f.\n\n",
			commas(first.N), perDoc(first.CLI, st.Plugin.Wall, first.Docs), perDoc(first.Floor, st.Floor.Wall, first.Docs))
	}
	r.goal(timeOK, "`kubectl-inject --local` time <= 1.0x floor, every N", "worst %.2fx", worstT)
	r.goal(memOK, "`kubectl-inject --local` memory <= 2x floor, every N", "worst %.2fx", worstM)
	if lin, ok := linearity(r.core, func(c coreRow) float64 { return c.CLI.Seconds() }); ok {
		p("Linearity: time per document at the largest N / at the smallest N = %.2f for --local\n", lin)
		linF, _ := linearity(r.core, func(c coreRow) float64 { return c.Floor.Seconds() })
		p("(floor: %.2f; 1.00 is perfectly linear, start-up cost makes small N look dearer).\n\n", linF)
		r.goal(lin <= 1.3, "`kubectl-inject --local` linear in N", "µs/doc largest N / smallest N = %.2f", lin)
	}

	p("Reference, **not the floor**: a kyaml whole-stream round trip (`hack/bench/kyamlrt`:\n")
	p("`kio.ByteReader` -> `kio.ByteWriter`). Its writer shares one yaml.v3 Encoder that keeps\n")
	p("every event until it is closed (go-yaml/yaml#873), so it grows much faster than the floor.\n\n")
	t = &table{head: []string{"N apps", "kyaml round trip", "RSS", "time / floor", "memory / floor", "--local / kyaml time"}}
	for _, c := range r.core {
		t.add(commas(c.N), secs(c.KyamlRT.Wall), mb(c.KyamlRT.MaxRSS), ratio(c.KyamlRT.Seconds(), c.Floor.Seconds()),
			ratio(c.KyamlRT.MB(), c.Floor.MB()), ratio(c.CLI.Seconds(), c.KyamlRT.Seconds()))
	}
	p("%s\n", t)

	p("**inject-fn** as a KRM function (ResourceList on stdin, the same documents as items, no\n")
	p("function config: embedded default) against a kyaml ResourceList round trip\n")
	p("(`kyamlrt -rl`: `kio.ByteReadWriter` with `KeepReaderAnnotations`, what every kyaml-based\n")
	p("function, and inject-fn, reads and writes). Goal: within 1.25x of it.\n\n")
	t = &table{head: []string{"N apps", "ResourceList", "kyaml RL round trip", "RSS", "inject-fn", "RSS",
		"time / kyaml RL", "memory / kyaml RL", "inject-fn time / floor"}}
	fnOK, worstFn := true, 0.0
	for _, c := range r.core {
		fr := c.Fn.Seconds() / c.KyamlRL.Seconds()
		worstFn = max(worstFn, fr)
		fnOK = fnOK && fr <= 1.25
		t.add(commas(c.N), mb(c.RLBytes), secs(c.KyamlRL.Wall), mb(c.KyamlRL.MaxRSS), secs(c.Fn.Wall), mb(c.Fn.MaxRSS),
			ratio(c.Fn.Seconds(), c.KyamlRL.Seconds()), ratio(c.Fn.MB(), c.KyamlRL.MB()), ratio(c.Fn.Seconds(), c.Floor.Seconds()))
	}
	p("%s\n", t)
	r.goal(fnOK, "`inject-fn` (KRM) time <= 1.25x kyaml ResourceList round trip, every N", "worst %.2fx", worstFn)
	p("inject-fn reads the ResourceList with kyaml (`kio.ByteReadWriter`) but writes it itself,\n")
	p("each item and result with a fresh yaml.v3 Encoder (byte-identical to `kio.ByteWriter`,\n")
	p("checked by `fn/processor/resourcelist_test.go`): kyaml's writer shares one Encoder whose\n")
	p("event buffer is never freed (go-yaml/yaml#873), and costs more than linear time in the\n")
	p("bytes written. That is why inject-fn, which writes more bytes than it reads (the sidecar\n")
	p("and one result per workload), can run faster than the no-op round trip.\n\n")
	return b.String()
}

// linearity is (time/doc at the largest N) / (time/doc at the smallest N).
func linearity(rows []coreRow, f func(coreRow) float64) (float64, bool) {
	if len(rows) < 2 {
		return 0, false
	}
	lo, hi := rows[0], rows[0]
	for _, c := range rows {
		if c.N < lo.N {
			lo = c
		}
		if c.N > hi.N {
			hi = c
		}
	}
	if lo.N == hi.N {
		return 0, false
	}
	return (f(hi) / float64(hi.Docs)) / (f(lo) / float64(lo.Docs)), true
}

// kustomizeSection is section 2.
func (r *report) kustomizeSection(e *env) string {
	if len(r.kustomize) == 0 {
		return ""
	}
	b, p := printer()
	p("## 2. Against kustomize by hand\n\n")
	p("**Patch**: a kustomization with the N-app stream and a `patches:` entry with\n")
	p("`target: {kind: Deployment}` holding a strategic merge patch that adds the same Envoy\n")
	p("container and volume; `kustomize build DIR`. **Exec**: the same stream with a\n")
	p("`SidecarInjection` transformer run as an exec function (`config.kubernetes.io/function:\n")
	p("exec: {path: bin/inject-fn}`); `kustomize build --enable-alpha-plugins --enable-exec DIR`.\n")
	p("kustomize grows superlinearly in N (about 24 min at 5,000 apps were measured earlier), so\n")
	p("**this part is capped at N = 1,000**; N = 1,000 is a single run.\n\n")
	p("**Control**: the same kustomization with a no-op exec function (`kyamlrt -rl`, a kyaml\n")
	p("ResourceList round trip) in place of inject-fn, at N <= %d: it separates kustomize's own\n", e.opts.kustomizeNoopMax)
	p("cost of running any function from inject-fn's.\n\n")
	t := &table{head: []string{"N apps", "runs", "kustomize + patches", "RSS", "kustomize + inject-fn (exec)", "RSS",
		"exec / patches (time)", "exec / patches (memory)", "kustomize + no-op exec", "inject-fn exec / no-op exec", "kubectl-inject --local", "patches / --local"}}
	for _, k := range r.kustomize {
		cli, cr := "-", "-"
		if k.HaveCLI {
			cli = secs(k.CLI.Wall)
			cr = ratio(k.Patch.Seconds(), k.CLI.Seconds())
		}
		noop, nr := "-", "-"
		if k.HaveNoop {
			noop = secs(k.Noop.Wall)
			nr = ratio(k.Exec.Seconds(), k.Noop.Seconds())
		}
		t.add(commas(k.N), fmt.Sprint(k.Runs), secs(k.Patch.Wall), mb(k.Patch.MaxRSS), secs(k.Exec.Wall), mb(k.Exec.MaxRSS),
			ratio(k.Exec.Seconds(), k.Patch.Seconds()), ratio(k.Exec.MB(), k.Patch.MB()), noop, nr, cli, cr)
	}
	p("%s\n", t)
	return b.String()
}

// startupSection is section 3 and the goals of start-up.
func (r *report) startupSection() string {
	s := r.startup
	if s == nil {
		return ""
	}
	b, p := printer()
	p("## 3. Function start-up\n\n")
	p("A ResourceList holding one Deployment, on stdin; median of %d runs each (after one\n", s.Runs)
	p("warm-up run), round-robin.\n\n")
	t := &table{head: []string{"program", "median wall", "peak RSS", "time / floor", "binary size"}}
	t.add("inject-fn (KRM)", secs(s.Fn.Wall), mb(s.Fn.MaxRSS), ratio(s.Fn.Seconds(), s.Floor.Seconds()), mb(s.FnSize))
	t.add("floor", secs(s.Floor.Wall), mb(s.Floor.MaxRSS), "1.00x", mb(s.FloorSize))
	t.add("kyaml RL round trip (reference)", secs(s.KyamlRL.Wall), mb(s.KyamlRL.MaxRSS), ratio(s.KyamlRL.Seconds(), s.Floor.Seconds()), mb(s.KyamlRTSize))
	t.add("kubectl-inject --local -f (the Deployment as a file)", secs(s.Plugin.Wall), mb(s.Plugin.MaxRSS), ratio(s.Plugin.Seconds(), s.Floor.Seconds()), mb(s.PluginSize))
	t.add("kinject-live --local -f (the same, client-go linked)", secs(s.PluginLive.Wall), mb(s.PluginLive.MaxRSS), ratio(s.PluginLive.Seconds(), s.Floor.Seconds()), mb(s.PluginLiveSize))
	p("%s\n", t)
	t2 := &table{head: []string{"what it costs", "median wall", "peak RSS", "time / floor"}}
	t2.add("a program that links kyaml and exits (`kyamlrt -noop`)", secs(s.KyamlNoop.Wall), mb(s.KyamlNoop.MaxRSS), ratio(s.KyamlNoop.Seconds(), s.Floor.Seconds()))
	p("%s\n", t2)
	p("Most of inject-fn's start-up is linking kyaml, which the core must use: kyaml's `yaml`\n")
	p("package imports kube-openapi's `validation/spec`, gnostic-models and protobuf, whose\n")
	p("initializers and larger binary cost every kyaml program the row above, before reading a\n")
	p("byte. inject-fn no longer imports `kyaml/fn/framework` (which added kube-openapi's\n")
	p("`validate`, strfmt and govalidator). A kyaml ResourceList round trip that changes\n")
	p("nothing is itself %s the floor: no kyaml-based function can start within 1.5x of it.\n\n", ratio(s.KyamlRL.Seconds(), s.Floor.Seconds()))
	p("The kinject-live row is what `--local` cost when the plugin was one binary: a %s\n", mb(s.PluginLiveSize))
	p("binary with client-go, cli-runtime and cobra, whose type registry alone takes about 3 ms\n")
	p("to initialize and whose peak RSS starts at %s. kubectl-inject now serves `--local`\n", mb(s.PluginLive.MaxRSS))
	p("itself without linking any of them, and hands every other command line to\n")
	p("kinject-live beside it.\n\n")
	p("Binary sizes (stripped, `-trimpath -ldflags \"-s -w\"`): inject-fn %s, kubectl-inject %s,\n", mb(s.FnSize), mb(s.PluginSize))
	p("kinject-live %s.\n", mb(s.PluginLiveSize))
	p("`go list -deps ./fn/inject-fn` lists %d k8s.io/client-go packages (goal: 0).\n\n", s.ClientGoInFn)
	// The reference is a program that links kyaml and exits: the core
	// must use kyaml, so what inject-fn adds is measured on top of it.
	fr := s.Fn.Seconds() / s.KyamlNoop.Seconds()
	r.goal(fr <= 1.5, "`inject-fn` start-up <= 1.5x a program that only links kyaml (one Deployment)", "%.2fx (%s vs %s; %.2fx the yaml.v3 floor)", fr, secs(s.Fn.Wall), secs(s.KyamlNoop.Wall), s.Fn.Seconds()/s.Floor.Seconds())
	r.goal(s.ClientGoInFn == 0, "no client-go in inject-fn", "%d packages, binary %s", s.ClientGoInFn, mb(s.FnSize))
	return b.String()
}

// profileSection is section 5.
func (r *report) profileSection() string {
	pr := r.profile
	if pr == nil {
		return ""
	}
	b, p := printer()
	p("## 5. Where the time goes\n\n")
	p("CPU profile (runtime/pprof, in process) of what `kubectl-inject --local` runs per document\n")
	p("(`manifest.Process` + `Injector.ProcessText`, as `BenchmarkInjectText`), on N = %s apps\n", commas(pr.N))
	p("(%s documents), %d passes, %s per pass, %.2f s sampled.\n\n", commas(3*pr.N), pr.Iterations, pr.PerRun.Round(100*time.Microsecond), pr.Total)
	t := &table{head: []string{"area (flat time summed)", "seconds", "share"}}
	for _, g := range pr.Groups {
		t.add(g.Name, fmt.Sprintf("%.2f", g.Flat), fmt.Sprintf("%.1f%%", g.FlatPct))
	}
	p("%s\n", t)
	t = &table{head: []string{"top functions by flat time", "flat", "flat %", "cum %"}}
	for _, x := range pr.Flat {
		t.add("`"+shortName(x.Name)+"`", fmt.Sprintf("%.2f s", x.Flat), fmt.Sprintf("%.1f%%", x.FlatPct), fmt.Sprintf("%.1f%%", x.CumPct))
	}
	p("%s\n", t)
	t = &table{head: []string{"project and YAML functions by cumulative time", "cum", "cum %"}}
	for _, x := range pr.Cum {
		t.add("`"+shortName(x.Name)+"`", fmt.Sprintf("%.2f s", x.Cum), fmt.Sprintf("%.1f%%", x.CumPct))
	}
	p("%s\n", t)
	parse := pr.cumOf("github.com/kinject/kubectl-inject/pkg/yamltext.Decode")
	enc := pr.cumOf("go.yaml.in/yaml/v3.(*Encoder)")
	own := pr.groupPct("pkg/inject (own code)") + pr.groupPct("pkg/manifest (stream split)")
	mem := pr.groupPct("allocation (runtime malloc)") + pr.groupPct("garbage collection")
	p("Reading: %.0f%% of the time is yaml.v3 parsing each document once\n", parse)
	p("(`yamltext.Decode` -> `yaml.(*Decoder).Decode`), %.0f%% is the project's own code\n", own)
	p("(flat), and allocation plus garbage collection, mostly of the parser's nodes, take %.0f%%\n", mem)
	p("(`runtime.asyncPreempt` is where a busy, loaded machine preempted the goroutine: a\n")
	p("sampling artifact, not work). yaml.v3's Encoder holds %.1f%% (cumulative): documents that\n", enc)
	p("are not injected are written back as their original bytes, and injected ones are\n")
	p("spliced as text from the rendered sidecar, so nothing is re-serialized. The floor parses\n")
	p("*and* encodes every document, which is why --local beats it once start-up is amortized.\n")
	p("Going faster would mean not building a full `yaml.Node` tree for documents that cannot\n")
	p("be targets (Service, ConfigMap: two of every three documents here): a cheap scan of\n")
	p("`kind:` before parsing would skip most of the parse time.\n\n")
	p("The Go benchmarks (`go test ./pkg/inject -run '^$' -bench . -benchmem`, run by make bench\n")
	p("before this program) give the same paths per operation with allocations.\n")
	return b.String()
}
