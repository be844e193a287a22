package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// run is one finished subprocess.
type run struct {
	Wall    time.Duration
	MaxRSS  int64         // bytes
	CPU     time.Duration // user + system: what a loaded machine distorts least
	AnonRSS int64         // bytes, peak anonymous memory; 0 unless cmdSpec.SampleAnon
}

// sample is the median of several runs.
type sample struct {
	Wall    time.Duration
	MaxRSS  int64
	CPU     time.Duration
	AnonRSS int64
	Runs    int
}

// Seconds is the wall time in seconds.
func (s sample) Seconds() float64 { return s.Wall.Seconds() }

// MB is the peak RSS in MiB.
func (s sample) MB() float64 { return float64(s.MaxRSS) / (1 << 20) }

// AnonMB is the peak anonymous memory in MiB.
func (s sample) AnonMB() float64 { return float64(s.AnonRSS) / (1 << 20) }

// cmdSpec is a program to measure: argv, stdin file ("" for none).
type cmdSpec struct {
	Name  string
	Args  []string
	Stdin string
	Dir   string
	Env   []string
	// SampleAnon: also sample the peak anonymous memory (rusage -anon).
	SampleAnon bool
}

// launcher is the path of hack/bench/rusage, set by setup.
var launcher string

// runOnce runs c with stdout to outPath and stderr to a buffer (kept on
// failure) through the rusage launcher; it returns wall time and peak RSS as
// the launcher measured them.
func runOnce(c cmdSpec, outPath string) (run, error) {
	return runTo(c, outPath, outPath+".rusage")
}

// runTo is runOnce with the launcher's result file named apart from the
// output (which can then be /dev/null).
func runTo(c cmdSpec, outPath, resFile string) (run, error) {
	args := append([]string{resFile}, c.Args...)
	if c.SampleAnon {
		args = append([]string{"-anon"}, args...)
	}
	cmd := exec.Command(launcher, args...)
	cmd.Dir = c.Dir
	if c.Env != nil {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	if c.Stdin != "" {
		f, err := os.Open(c.Stdin)
		if err != nil {
			return run{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	out, err := os.Create(outPath)
	if err != nil {
		return run{}, err
	}
	defer out.Close()
	cmd.Stdout = out
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return run{}, fmt.Errorf("%s: %v\n%s", c.Name, err, stderr.String())
	}
	res, err := os.ReadFile(resFile)
	if err != nil {
		return run{}, err
	}
	var ns, kb, cpu, anon int64
	var code int
	if _, err := fmt.Sscan(string(res), &ns, &kb, &code, &cpu, &anon); err != nil {
		return run{}, fmt.Errorf("%s: rusage result %q: %v", c.Name, res, err)
	}
	return run{Wall: time.Duration(ns), MaxRSS: kb * 1024, CPU: time.Duration(cpu), AnonRSS: anon * 1024}, nil
}

// measureRounds runs every spec n times, round-robin (so drift hits all of
// them alike), each with stdout to out(spec), calls each (unless nil) after
// every run, and returns the runs of every spec in spec order.
func measureRounds(specs []cmdSpec, n int, out func(cmdSpec) string, each func(cmdSpec, run)) ([][]run, error) {
	runs := make([][]run, len(specs))
	for i := 0; i < n; i++ {
		for j, s := range specs {
			r, err := runOnce(s, out(s))
			if err != nil {
				return nil, err
			}
			runs[j] = append(runs[j], r)
			if each != nil {
				each(s, r)
			}
		}
	}
	return runs, nil
}

// measureAll runs every spec n times, round-robin, with stdout to outPath,
// and returns the medians in spec order.
func measureAll(specs []cmdSpec, n int, outPath string) ([]sample, error) {
	runs, err := measureRounds(specs, n, func(cmdSpec) string { return outPath }, nil)
	if err != nil {
		return nil, err
	}
	out := make([]sample, len(specs))
	for j := range specs {
		out[j] = median(runs[j])
	}
	return out, nil
}

// median is the median wall time and the median peak RSS of rs (each the
// mean of the middle two for an even count).
func median(rs []run) sample {
	walls := make([]time.Duration, len(rs))
	cpus := make([]time.Duration, len(rs))
	rss := make([]int64, len(rs))
	anon := make([]int64, len(rs))
	for i, r := range rs {
		walls[i], rss[i], cpus[i], anon[i] = r.Wall, r.MaxRSS, r.CPU, r.AnonRSS
	}
	sort.Slice(walls, func(a, b int) bool { return walls[a] < walls[b] })
	sort.Slice(cpus, func(a, b int) bool { return cpus[a] < cpus[b] })
	sort.Slice(rss, func(a, b int) bool { return rss[a] < rss[b] })
	sort.Slice(anon, func(a, b int) bool { return anon[a] < anon[b] })
	m := len(rs) / 2
	s := sample{Wall: walls[m], MaxRSS: rss[m], CPU: cpus[m], AnonRSS: anon[m], Runs: len(rs)}
	if len(rs)%2 == 0 {
		s.Wall = (walls[m-1] + walls[m]) / 2
		s.CPU = (cpus[m-1] + cpus[m]) / 2
		s.MaxRSS = (rss[m-1] + rss[m]) / 2
		s.AnonRSS = (anon[m-1] + anon[m]) / 2
	}
	return s
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct{ b []byte }

// Write keeps the last 4 KiB of what was written so far and p.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = append([]byte(nil), t.b[len(t.b)-4096:]...)
	}
	return len(p), nil
}

// String is what the buffer kept.
func (t *tailBuffer) String() string { return string(t.b) }

// tailBuffer is an io.Writer.
var _ io.Writer = (*tailBuffer)(nil)

// ratio formats a/b as "1.23x".
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// secs formats a duration as ms below 0.1 s, else seconds.
func secs(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 0.1:
		return fmt.Sprintf("%.1f ms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2f s", s)
	default:
		return fmt.Sprintf("%.1f s", s)
	}
}

// mb formats bytes as MB (MiB).
func mb(b int64) string {
	m := float64(b) / (1 << 20)
	if m < 10 {
		return fmt.Sprintf("%.1f MB", m)
	}
	return fmt.Sprintf("%.0f MB", m)
}

// yesNo is "yes", or a bold "no".
func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// table is a Markdown table.
type table struct {
	head []string
	rows [][]string
}

// add appends a row.
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// String is the table in Markdown.
func (t *table) String() string {
	var b bytes.Buffer
	line := func(cells []string) {
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	line(t.head)
	sep := make([]string, len(t.head))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}

// commas formats n with thousands separators: 1,234,567.
func commas(n int) string { return groupDigits(fmt.Sprint(n)) }

// commas64 is commas for a uint64.
func commas64(n uint64) string { return groupDigits(strconv.FormatUint(n, 10)) }

// groupDigits puts a comma before every third digit from the right of s.
func groupDigits(s string) string {
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
