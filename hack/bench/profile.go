package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// profileResult summarizes a CPU profile of the core's text path.
type profileResult struct {
	N, Iterations int
	PerRun        time.Duration
	Flat          []profEntry // top entries by flat time
	Cum           []profEntry // top project functions by cumulative time
	Groups        []profEntry // flat time summed by area
	Total         float64     // seconds sampled
	all           []profEntry // every node, by cum
}

// cumOf is the largest cumulative share among nodes whose name starts with
// prefix.
func (p *profileResult) cumOf(prefix string) float64 {
	best := 0.0
	for _, x := range p.all {
		if strings.HasPrefix(x.Name, prefix) {
			best = max(best, x.CumPct)
		}
	}
	return best
}

// groupPct is the flat share of the area name.
func (p *profileResult) groupPct(name string) float64 {
	for _, g := range p.Groups {
		if g.Name == name {
			return g.FlatPct
		}
	}
	return 0
}

// profEntry is one node of the profile.
type profEntry struct {
	Name            string
	Flat, Cum       float64 // seconds
	FlatPct, CumPct float64
}

// profileN is the number of apps the profile runs on.
const profileN = 1000

// profile runs what kubectl-inject --local runs per document
// (manifest.Process + Injector.ProcessText, as BenchmarkInjectText) on
// N = 1,000 apps for a few seconds under the CPU profiler.
func (e *env) profile() error {
	src, err := genApps(profileN)
	if err != nil {
		return err
	}
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		return err
	}
	once := func() error {
		return manifest.Process(bytes.NewReader(src), io.Discard, func(i int, doc []byte) []byte {
			out, _ := in.ProcessText(inject.OpInject, doc, i)
			return out
		})
	}
	if err := once(); err != nil { // warm-up
		return err
	}
	path := filepath.Join(e.tmp, "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	start := time.Now()
	iters := 0
	for time.Since(start) < 5*time.Second {
		if err := once(); err != nil {
			pprof.StopCPUProfile()
			return err
		}
		iters++
	}
	elapsed := time.Since(start)
	pprof.StopCPUProfile()
	f.Close()
	p := &profileResult{N: profileN, Iterations: iters, PerRun: elapsed / time.Duration(iters)}

	flat, err := pprofTop(path, false)
	if err != nil {
		return err
	}
	cum, err := pprofTop(path, true)
	if err != nil {
		return err
	}
	for _, x := range flat {
		p.Total += x.Flat
	}
	groups := map[string]float64{}
	for _, x := range flat {
		groups[area(x.Name)] += x.Flat
	}
	for g, s := range groups {
		p.Groups = append(p.Groups, profEntry{Name: g, Flat: s, FlatPct: 100 * s / p.Total})
	}
	sort.Slice(p.Groups, func(i, j int) bool { return p.Groups[i].Flat > p.Groups[j].Flat })
	p.Flat = flat[:min(12, len(flat))]
	p.all = cum
	for _, x := range cum {
		if strings.HasPrefix(x.Name, "github.com/kinject/") || strings.HasPrefix(x.Name, "go.yaml.in/") || strings.HasPrefix(x.Name, "sigs.k8s.io/") {
			p.Cum = append(p.Cum, x)
			if len(p.Cum) == 14 {
				break
			}
		}
	}
	e.report.profile = p
	logf("profile: %d runs over N=%d, %s per run", iters, profileN, p.PerRun.Round(time.Millisecond))
	return nil
}

// pprofTop returns every node of `go tool pprof -top`, sorted by flat or cum.
func pprofTop(path string, byCum bool) ([]profEntry, error) {
	args := []string{"tool", "pprof", "-top", "-nodecount=100000", "-unit=s"}
	if byCum {
		args = append(args, "-cum")
	}
	out, err := exec.Command("go", append(args, path)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %w", err)
	}
	var es []profEntry
	header := false
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if !header {
			header = len(f) >= 5 && f[0] == "flat" && f[1] == "flat%"
			continue
		}
		if len(f) < 6 {
			continue
		}
		e := profEntry{Name: strings.Join(f[5:], " ")}
		e.Flat = parseSec(f[0])
		e.FlatPct = parsePct(f[1])
		e.Cum = parseSec(f[3])
		e.CumPct = parsePct(f[4])
		es = append(es, e)
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("go tool pprof: no entries in\n%s", out)
	}
	return es, nil
}

// parseSec parses "1.23s" (0 when it cannot).
func parseSec(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64)
	return v
}

// parsePct parses "12.3%" (0 when it cannot).
func parsePct(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	return v
}

// area puts a function into a coarse bucket for the summary.
func area(fn string) string {
	switch {
	case strings.HasPrefix(fn, "runtime.asyncPreempt"):
		return "runtime.asyncPreempt (preemption; sampling artifact)"
	case strings.HasPrefix(fn, "runtime.mallocgc"), strings.HasPrefix(fn, "runtime.memclr"),
		strings.HasPrefix(fn, "runtime.(*mheap)"), strings.HasPrefix(fn, "runtime.(*mcache)"),
		strings.HasPrefix(fn, "runtime.(*mcentral)"), strings.HasPrefix(fn, "runtime.nextFreeFast"),
		strings.HasPrefix(fn, "runtime.heapSetType"), strings.HasPrefix(fn, "runtime.growslice"),
		strings.HasPrefix(fn, "runtime.newobject"), strings.HasPrefix(fn, "runtime.makeslice"),
		strings.Contains(fn, "runtime.(*mspan)"):
		return "allocation (runtime malloc)"
	case strings.HasPrefix(fn, "runtime.gc"), strings.HasPrefix(fn, "runtime.scan"),
		strings.HasPrefix(fn, "runtime.greyobject"), strings.HasPrefix(fn, "runtime.findObject"),
		strings.HasPrefix(fn, "runtime.markBits"), strings.HasPrefix(fn, "runtime.(*gcWork)"),
		strings.HasPrefix(fn, "runtime.spanOf"), strings.HasPrefix(fn, "runtime.wbBuf"),
		strings.HasPrefix(fn, "runtime.bulkBarrier"), strings.HasPrefix(fn, "runtime.typePointers"),
		strings.Contains(fn, "runtime.(*gcBits)"), strings.Contains(fn, "runtime.(*spanSet)"),
		strings.HasPrefix(fn, "runtime.sweep"), strings.Contains(fn, "runtime.(*sweep"),
		strings.Contains(fn, "runtime.(*mspan).sweep"), strings.HasPrefix(fn, "gcWriteBarrier"),
		strings.HasPrefix(fn, "runtime.gcWriteBarrier"), strings.Contains(fn, "scanobject"),
		strings.Contains(fn, "runtime.(*gcControllerState)"):
		return "garbage collection"
	case strings.HasPrefix(fn, "runtime."), strings.HasPrefix(fn, "internal/runtime"):
		return "runtime (other)"
	case strings.HasPrefix(fn, "go.yaml.in/yaml/v3."), strings.HasPrefix(fn, "gopkg.in/yaml.v3."):
		return "yaml.v3 (parse, encode)"
	case strings.HasPrefix(fn, "sigs.k8s.io/kustomize/kyaml"):
		return "kyaml"
	case strings.HasPrefix(fn, "github.com/kinject/kubectl-inject/pkg/inject."), strings.HasPrefix(fn, "github.com/kinject/kubectl-inject/pkg/yamltext."):
		return "pkg/inject (own code)"
	case strings.HasPrefix(fn, "github.com/kinject/kubectl-inject/pkg/manifest."):
		return "pkg/manifest (stream split)"
	case strings.HasPrefix(fn, "bytes."), strings.HasPrefix(fn, "strings."), strings.HasPrefix(fn, "unicode"),
		strings.HasPrefix(fn, "strconv."), strings.HasPrefix(fn, "bufio."), strings.HasPrefix(fn, "indexbytebody"),
		strings.HasPrefix(fn, "memeqbody"), strings.HasPrefix(fn, "internal/bytealg"):
		return "bytes/strings/strconv"
	case strings.HasPrefix(fn, "crypto/"), strings.HasPrefix(fn, "encoding/"), strings.HasPrefix(fn, "hash/"):
		return "hashing/encoding (std)"
	case strings.HasPrefix(fn, "sort."), strings.HasPrefix(fn, "slices."), strings.HasPrefix(fn, "maps."),
		strings.HasPrefix(fn, "reflect."), strings.HasPrefix(fn, "sync."):
		return "sort/reflect/sync (std)"
	}
	return "other"
}
