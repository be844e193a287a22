package sizing

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	values := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6} // 1..10
	for _, tc := range []struct{ p, want float64 }{{0.5, 5}, {0.95, 10}, {0.9, 9}, {0.1, 1}, {1, 10}, {0.01, 1}} {
		if got := Percentile(values, tc.p); got != tc.want {
			t.Errorf("p%.0f = %v, want %v", tc.p*100, got, tc.want)
		}
	}
	if got := Percentile(nil, 0.95); got != 0 {
		t.Errorf("p95 of nothing = %v", got)
	}
	if values[0] != 5 {
		t.Error("Percentile sorted its input")
	}
}

// series is n samples: CPU i/n * cpuTop cores, memory memTop bytes at the
// last sample.
func series(n int, cpuTop, memTop float64) Usage {
	u := Usage{Container: "envoy", Pods: 2}
	for i := 1; i <= n; i++ {
		u.CPU = append(u.CPU, cpuTop*float64(i)/float64(n))
		u.Memory = append(u.Memory, memTop*float64(i)/float64(n))
	}
	return u
}

const mi = 1 << 20

func TestRecommend(t *testing.T) {
	now := Resources{CPURequest: 0.1, MemoryRequest: 64 * mi, MemoryLimit: 512 * mi}
	// 100 samples, CPU 1..100 thousandths of 0.2 cores: p95 is 0.19
	// cores; memory peaks at 20 MiB: 23 MiB with 15%, rounded up to 24
	// MiB... 20*1.15 = 23 exactly: 23 MiB.
	r := Recommend(series(100, 0.2, 20*mi), now, DefaultOptions)
	if r.Reason != "" {
		t.Fatalf("not sized: %s", r.Message)
	}
	if math.Abs(r.Recommended.CPURequest-0.19) > 1e-9 || r.Recommended.MemoryRequest != 23*mi || r.Recommended.MemoryLimit != 23*8*mi {
		t.Errorf("recommended %+v; want cpu 0.19, memory 23Mi, limit 184Mi (the template's 8x)", r.Recommended)
	}
	if r.ObservedMemoryMax != 20*mi || r.Samples != 100 || r.Pods != 2 {
		t.Errorf("observed %+v", r)
	}
	cpu, mem := r.Freed(10)
	if math.Abs(cpu-(0.1-0.19)*10) > 1e-9 || mem != (64-23)*mi*10 {
		t.Errorf("freed across 10: %v cores, %v bytes", cpu, mem)
	}
}

func TestRecommendRefuses(t *testing.T) {
	now := Resources{CPURequest: 0.1, MemoryRequest: 64 * mi, MemoryLimit: 512 * mi}
	r := Recommend(series(9, 0.2, 20*mi), now, DefaultOptions)
	if r.Reason != ReasonTooFewSamples || r.Recommended != now {
		t.Errorf("9 samples: %+v; want too_few_samples and nothing changed", r)
	}
	if r := Recommend(Usage{Container: "envoy"}, now, Options{}); r.Reason != ReasonTooFewSamples {
		t.Errorf("no samples, no minimum: %+v", r)
	}
	// p95 0.095 cores (within 10% of 0.1), memory 64 MiB * 1.15 would
	// change the memory: sized. With memory 55.7 MiB peak: 64.06 -> 65
	// MiB, within 10%, and CPU within 10%: not sized.
	r = Recommend(series(100, 0.1, 55.7*mi), now, DefaultOptions)
	if r.Reason != ReasonBelowThreshold || r.Recommended != now {
		t.Errorf("a change under the threshold: %+v", r)
	}
}

func TestRecommendBounds(t *testing.T) {
	now := Resources{CPURequest: 0.1, MemoryRequest: 64 * mi}
	o := DefaultOptions
	o.MaxCPU, o.MaxMemory = 0.05, 100*mi
	r := Recommend(series(100, 0.2, 200*mi), now, o)
	// Capped CPU; memory capped at 100 MiB but never below the 200 MiB peak.
	if !r.Capped || r.Recommended.CPURequest != 0.05 || r.Recommended.MemoryRequest != 200*mi {
		t.Errorf("capped: %+v", r.Recommended)
	}
	// No limit-to-request ratio in the template: the limit is twice the request.
	if r.Recommended.MemoryLimit != 400*mi {
		t.Errorf("limit %v, want 400Mi", r.Recommended.MemoryLimit/mi)
	}
	// A CPU request is never above the container's CPU limit (the API
	// server refuses it): capped there, the limit kept.
	r = Recommend(series(100, 0.2, 20*mi), Resources{CPURequest: 0.1, MemoryRequest: 64 * mi, CPULimit: 0.15}, DefaultOptions)
	if !r.Capped || r.Recommended.CPURequest != 0.15 || r.Recommended.CPULimit != 0.15 {
		t.Errorf("under a 150m limit: %+v, capped %v; want 150m, capped", r.Recommended, r.Capped)
	}
	r = Recommend(series(100, 0.2, 20*mi), Resources{CPURequest: 0.1, MemoryRequest: 64 * mi, CPULimit: 1}, DefaultOptions)
	if r.Capped || r.Recommended.CPURequest != 0.19 {
		t.Errorf("under a 1000m limit: %+v, capped %v; want 190m, not capped", r.Recommended, r.Capped)
	}
	// An idle sidecar gets 1m, never 0.
	r = Recommend(series(100, 0, mi), now, DefaultOptions)
	if r.Recommended.CPURequest != 0.001 {
		t.Errorf("idle: cpu %v, want 0.001", r.Recommended.CPURequest)
	}
}
