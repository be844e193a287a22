package main

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// The API server's /metrics, read by the parts that run one (live,
// admission, status): the scrape itself, the sample lines of the text
// format, and the request counts of apiserver_request_total.

// requests is a delta of the API server's apiserver_request_total.
type requests struct {
	Deployments map[string]int // verb -> count, resource="deployments"
	All         int            // every request (the scrapes of /metrics are not counted)
	Calls       map[call]int   // every series by verb, resource and subresource
}

// call is a kind of request as apiserver_request_total labels it.
type call struct{ Verb, Group, Resource, Subresource string }

// String is "LIST deployments.apps", "GET pods/log", or "GET /apis" for a
// request that is not for a resource (the path is in the subresource label).
func (c call) String() string {
	if c.Resource == "" {
		return c.Verb + " /" + strings.TrimPrefix(c.Subresource, "/")
	}
	r := c.Resource
	if c.Group != "" {
		r += "." + c.Group
	}
	if c.Subresource != "" {
		r += "/" + c.Subresource
	}
	return c.Verb + " " + r
}

// verb is the number of requests of verb v on deployments.
func (r requests) verb(v string) int { return r.Deployments[v] }

// String lists the requests on deployments by verb ("GET 1, PATCH 100"),
// "none" when there were none.
func (r requests) String() string {
	var verbs []string
	for v := range r.Deployments {
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	var parts []string
	for _, v := range verbs {
		parts = append(parts, fmt.Sprintf("%s %d", v, r.Deployments[v]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// counters is one scrape of apiserver_request_total.
type counters struct {
	deployments map[string]int
	calls       map[call]int
	all         int
}

// minus is the requests between two scrapes. The API server does not count
// requests for /metrics in apiserver_request_total, so the scrapes add
// nothing.
func (a counters) minus(b counters) requests {
	r := requests{Deployments: map[string]int{}, All: a.all - b.all, Calls: map[call]int{}}
	for v, c := range a.deployments {
		if d := c - b.deployments[v]; d != 0 {
			r.Deployments[v] = d
		}
	}
	for k, c := range a.calls {
		if d := c - b.calls[k]; d != 0 {
			r.Calls[k] = d
		}
	}
	return r
}

// scrape reads the API server's apiserver_request_total.
func scrape(ctx context.Context, cs kubernetes.Interface) (counters, error) {
	text, err := metricsText(ctx, cs)
	if err != nil {
		return counters{}, err
	}
	return requestCounters(text)
}

// countRequests runs f between two scrapes and returns the requests the API
// server counted in between.
func countRequests(ctx context.Context, cs kubernetes.Interface, f func() error) (requests, error) {
	before, err := scrape(ctx, cs)
	if err != nil {
		return requests{}, err
	}
	if err := f(); err != nil {
		return requests{}, err
	}
	after, err := scrape(ctx, cs)
	if err != nil {
		return requests{}, err
	}
	return after.minus(before), nil
}

// requestCounters sums the series of apiserver_request_total in the text of
// /metrics: all of them, by call, and those on deployments by verb.
func requestCounters(text string) (counters, error) {
	c := counters{deployments: map[string]int{}, calls: map[call]int{}}
	err := eachSample(text, func(name, labels string, v float64) {
		if name != "apiserver_request_total" || labels == "" {
			return
		}
		c.all += int(v)
		c.calls[call{Verb: label(labels, "verb"), Group: label(labels, "group"), Resource: label(labels, "resource"), Subresource: label(labels, "subresource")}] += int(v)
		if strings.Contains(labels, `resource="deployments"`) && strings.Contains(labels, `subresource=""`) {
			c.deployments[label(labels, "verb")] += int(v)
		}
	})
	return c, err
}

// requestDelta is the requests between two texts of /metrics.
func requestDelta(before, after string) (requests, error) {
	b, err := requestCounters(before)
	if err != nil {
		return requests{}, err
	}
	a, err := requestCounters(after)
	if err != nil {
		return requests{}, err
	}
	return a.minus(b), nil
}

// label is the value of label name in the labels of a series (without the
// braces; name must start the labels or follow a ",": resource is not the
// end of subresource).
func label(labels, name string) string {
	if strings.HasPrefix(labels, name+`="`) {
		rest := labels[len(name)+2:]
		return rest[:strings.IndexByte(rest, '"')]
	}
	i := strings.Index(labels, ","+name+`="`)
	if i < 0 {
		return ""
	}
	rest := labels[i+1+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

// metricsText is the text of the API server's /metrics.
func metricsText(ctx context.Context, cs kubernetes.Interface) (string, error) {
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read /metrics: %w", err)
	}
	return string(body), nil
}

// metricLine splits a sample line into name, labels (without braces) and
// value.
func metricLine(line string) (name, labels string, v float64, ok bool) {
	if line == "" || line[0] == '#' {
		return "", "", 0, false
	}
	sp := strings.LastIndexByte(line, ' ')
	if sp < 0 {
		return "", "", 0, false
	}
	v, err := strconv.ParseFloat(line[sp+1:], 64)
	if err != nil {
		return "", "", 0, false
	}
	head := line[:sp]
	if i := strings.IndexByte(head, '{'); i >= 0 {
		return head[:i], strings.TrimSuffix(head[i+1:], "}"), v, true
	}
	return head, "", v, true
}

// eachSample calls f on every sample line of text, in order; the error is
// the scanner's (a line longer than 16 MiB).
func eachSample(text string, f func(name, labels string, v float64)) error {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if name, labels, v, ok := metricLine(sc.Text()); ok {
			f(name, labels, v)
		}
	}
	return sc.Err()
}

// histogram is the _sum and _count of one histogram series.
type histogram struct{ sum, count float64 }

// histogramDeltas returns, for every histogram series keep selects,
// after minus before of its _sum and _count, keyed "name{labels}".
func histogramDeltas(before, after string, keep func(name, labels string) bool) map[string]histogram {
	read := func(text string) map[string]histogram {
		m := map[string]histogram{}
		eachSample(text, func(name, labels string, v float64) {
			var base string
			var isSum bool
			switch {
			case strings.HasSuffix(name, "_sum"):
				base, isSum = strings.TrimSuffix(name, "_sum"), true
			case strings.HasSuffix(name, "_count"):
				base = strings.TrimSuffix(name, "_count")
			default:
				return
			}
			if !keep(base, labels) {
				return
			}
			k := base + "{" + labels + "}"
			h := m[k]
			if isSum {
				h.sum = v
			} else {
				h.count = v
			}
			m[k] = h
		})
		return m
	}
	b, a := read(before), read(after)
	out := map[string]histogram{}
	for k, h := range a {
		d := histogram{sum: h.sum - b[k].sum, count: h.count - b[k].count}
		if d.count > 0 {
			out[k] = d
		}
	}
	return out
}

// splitLabels splits `a="x",b="y,z"` at the commas between labels.
func splitLabels(s string) []string {
	var out []string
	inQuote, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
