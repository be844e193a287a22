package main

import (
	"sort"
	"strings"
)

// keepLatency selects the latency histograms the report shows: the API
// server's POST pods latency, the admission steps and controllers at
// CREATE, and everything of the admission policies.
func keepLatency(name, labels string) bool {
	switch {
	case name == "apiserver_request_duration_seconds":
		return strings.Contains(labels, `resource="pods"`) && strings.Contains(labels, `verb="POST"`) && strings.Contains(labels, `subresource=""`)
	case name == "apiserver_admission_step_admission_duration_seconds",
		name == "apiserver_admission_controller_admission_duration_seconds":
		return strings.Contains(labels, `operation="CREATE"`)
	case strings.HasPrefix(name, "apiserver_mutating_admission_policy_"),
		strings.HasPrefix(name, "apiserver_validating_admission_policy_"),
		strings.HasPrefix(name, "apiserver_admission_match_condition_"),
		strings.HasPrefix(name, "apiserver_cel_"):
		return true
	}
	return false
}

// latencyRow is one histogram series with its totals on every side.
type latencyRow struct {
	Series string
	Sides  map[string]histogram // side -> totals; absent when never observed
}

// mean is the mean observation of the side, and whether there is one.
func (l latencyRow) mean(side string) (float64, bool) {
	h, ok := l.Sides[side]
	if !ok || h.count == 0 {
		return 0, false
	}
	return h.sum / h.count, true
}

// latencyRows merges the sides' totals by series, API request latency
// first, then admission steps, controllers and policies.
func latencyRows(totals map[string]map[string]histogram) []latencyRow {
	keys := map[string]bool{}
	for _, m := range totals {
		for k := range m {
			keys[k] = true
		}
	}
	var rows []latencyRow
	for k := range keys {
		row := latencyRow{Series: k, Sides: map[string]histogram{}}
		for side, m := range totals {
			if h, ok := m[k]; ok {
				row.Sides[side] = h
			}
		}
		rows = append(rows, row)
	}
	rank := func(s string) int {
		for i, p := range []string{"apiserver_request_duration_seconds", "apiserver_admission_step_", "apiserver_admission_controller_", "apiserver_mutating_", "apiserver_validating_", "apiserver_admission_match_", "apiserver_cel_"} {
			if strings.HasPrefix(s, p) {
				return i
			}
		}
		return 99
	}
	sort.Slice(rows, func(a, b int) bool {
		if ra, rb := rank(rows[a].Series), rank(rows[b].Series); ra != rb {
			return ra < rb
		}
		return rows[a].Series < rows[b].Series
	})
	return rows
}

// shortSeries drops the labels that do not tell the rows apart.
func shortSeries(s string) string {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return s
	}
	name, labels := s[:i], strings.TrimSuffix(s[i+1:], "}")
	var keep []string
	for _, l := range splitLabels(labels) {
		k := l[:strings.IndexByte(l, '=')]
		switch k {
		case "name", "type", "policy", "kind", "error_type", "rejected", "verb", "resource":
			keep = append(keep, l)
		}
	}
	return name + "{" + strings.Join(keep, ",") + "}"
}

// metricFamily is a metric family the API server exposes, with its number
// of series and their total.
type metricFamily struct {
	Name    string
	Samples int
	Total   float64 // sum of the _count (histograms) or of the values
}

// families lists the metric families whose name mentions CEL or admission
// policies, with their number of series and total count: which of them the
// API server exposes and fills.
func families(text string) []metricFamily {
	m := map[string]*metricFamily{}
	eachSample(text, func(name, labels string, v float64) {
		base := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, suf)
		}
		if !(strings.Contains(base, "_cel_") || strings.Contains(base, "admission_policy") || strings.Contains(base, "match_condition")) {
			return
		}
		f := m[base]
		if f == nil {
			f = &metricFamily{Name: base}
			m[base] = f
		}
		switch {
		case strings.HasSuffix(name, "_bucket"), strings.HasSuffix(name, "_sum"):
		case strings.HasSuffix(name, "_count") || base == name:
			f.Samples++
			f.Total += v
		}
	})
	var out []metricFamily
	for _, f := range m {
		out = append(out, *f)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
