package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
)

// usageKey names one container of one Pod.
type usageKey struct{ namespace, pod, container string }

// samples are what a source measured, per container of each Pod: CPU in
// cores, memory working set in bytes.
type samples map[usageKey]*containerSamples

type containerSamples struct{ cpu, memory []float64 }

func (s samples) add(k usageKey, cpu, memory float64, hasCPU, hasMemory bool) {
	c := s[k]
	if c == nil {
		c = &containerSamples{}
		s[k] = c
	}
	if hasCPU {
		c.cpu = append(c.cpu, cpu)
	}
	if hasMemory {
		c.memory = append(c.memory, memory)
	}
}

// podMetricsList is the part of metrics.k8s.io/v1beta1 PodMetricsList read.
type podMetricsList struct {
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Timestamp  time.Time `json:"timestamp"`
		Containers []struct {
			Name  string            `json:"name"`
			Usage map[string]string `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

// sampleMetricsAPI reads metrics.k8s.io (metrics-server) every interval
// for watch, in each namespace: one sample per container each time the
// server's measurement is new (its timestamp moved).
func sampleMetricsAPI(ctx context.Context, client rest.Interface, namespaces []string, watch, interval time.Duration, progress func(string)) (samples, error) {
	out := samples{}
	seen := map[usageKey]time.Time{}
	deadline := time.Now().Add(watch)
	for {
		for _, ns := range namespaces {
			path := "/apis/metrics.k8s.io/v1beta1/pods"
			if ns != "" {
				path = "/apis/metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods"
			}
			data, err := client.Get().AbsPath(path).DoRaw(ctx)
			if err != nil {
				return nil, fmt.Errorf("reading the metrics API (%s): %s; is metrics-server installed? (or give --prometheus URL)", path, readError(err))
			}
			var list podMetricsList
			if err := json.Unmarshal(data, &list); err != nil {
				return nil, fmt.Errorf("reading the metrics API (%s): %w", path, err)
			}
			for _, item := range list.Items {
				for _, c := range item.Containers {
					k := usageKey{item.Metadata.Namespace, item.Metadata.Name, c.Name}
					if !item.Timestamp.After(seen[k]) {
						continue // not measured again yet
					}
					seen[k] = item.Timestamp
					cpu, cerr := resource.ParseQuantity(c.Usage["cpu"])
					mem, merr := resource.ParseQuantity(c.Usage["memory"])
					out.add(k, cpu.AsApproximateFloat64(), mem.AsApproximateFloat64(), cerr == nil, merr == nil)
				}
			}
		}
		if !time.Now().Before(deadline) {
			return out, nil
		}
		progress(fmt.Sprintf("sampling the metrics API: %s left", time.Until(deadline).Round(time.Second)))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(interval, time.Until(deadline))):
		}
	}
}

// promResponse is the part of Prometheus' /api/v1/query_range answer read.
type promResponse struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// samplePrometheus reads cAdvisor's series, as kube-prometheus scrapes
// them, over window ending now: the CPU rate over each step and the
// memory working set, per container of the given Pods.
func samplePrometheus(ctx context.Context, base string, window time.Duration, pods map[string][]string, containers []string) (samples, error) {
	end := time.Now()
	start := end.Add(-window)
	step := max(15*time.Second, window/1000).Round(time.Second)
	out := samples{}
	for ns, names := range pods {
		selector := fmt.Sprintf(`namespace=%q,pod=~%q,container=~%q`, ns, strings.Join(quoteRegex(names), "|"), strings.Join(quoteRegex(containers), "|"))
		queries := []struct {
			q   string
			cpu bool
		}{
			{fmt.Sprintf("rate(container_cpu_usage_seconds_total{%s}[%s])", selector, promDuration(max(step, time.Minute))), true},
			{fmt.Sprintf("container_memory_working_set_bytes{%s}", selector), false},
		}
		for _, q := range queries {
			v := url.Values{"query": {q.q}, "start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix(), 10)}, "step": {promDuration(step)}}
			resp, err := promGet(ctx, strings.TrimSuffix(base, "/")+"/api/v1/query_range?"+v.Encode())
			if err != nil {
				return nil, err
			}
			for _, series := range resp.Data.Result {
				k := usageKey{series.Metric["namespace"], series.Metric["pod"], series.Metric["container"]}
				for _, point := range series.Values {
					s, _ := point[1].(string)
					f, err := strconv.ParseFloat(s, 64)
					if err != nil {
						continue
					}
					out.add(k, f, f, q.cpu, !q.cpu)
				}
			}
		}
	}
	return out, nil
}

func promGet(ctx context.Context, u string) (*promResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("querying Prometheus: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("querying Prometheus: %w", err)
	}
	var pr promResponse
	if err := json.Unmarshal(body, &pr); err != nil {
		return nil, fmt.Errorf("querying Prometheus (HTTP %d): %w", resp.StatusCode, err)
	}
	if pr.Status != "success" {
		return nil, fmt.Errorf("querying Prometheus (HTTP %d): %s", resp.StatusCode, pr.Error)
	}
	return &pr, nil
}

// promDuration writes d as Prometheus reads a duration (whole seconds).
func promDuration(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + "s" }

func quoteRegex(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = regexpQuote(n)
	}
	return out
}

// regexpQuote escapes what Prometheus' RE2 reads specially in a name.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
