package sizing

import (
	"fmt"
	"math"
	"sort"

	"github.com/kinject/kubectl-inject/pkg/reason"
)

// Usage is what one sidecar container of one workload used: a CPU rate
// (cores) and a memory working set (bytes) per sample, across its Pods.
type Usage struct {
	Container string
	// Pods is how many Pods the samples came from.
	Pods int
	// CPU and Memory are the samples (cores, bytes).
	CPU    []float64
	Memory []float64
}

// Options say how a recommendation is computed.
type Options struct {
	// CPUPercentile is the percentile of the CPU samples the CPU request
	// covers (0.95: p95).
	CPUPercentile float64
	// MemoryHeadroom is added to the memory peak for the memory request
	// (0.15: 15% above the highest working set seen).
	MemoryHeadroom float64
	// MinSamples is the fewest samples of each resource to size from.
	MinSamples int
	// MaxCPU and MaxMemory cap the recommendation (cores, bytes; 0: none).
	MaxCPU, MaxMemory float64
	// Threshold is the smallest relative change made (0.1: a request
	// that would change by less than 10% stays).
	Threshold float64
}

// DefaultOptions are kubectl inject size's defaults.
var DefaultOptions = Options{CPUPercentile: 0.95, MemoryHeadroom: 0.15, MinSamples: 10, Threshold: 0.1}

// Resources are a container's CPU (cores) and memory (bytes) requests
// and limits; 0 when not set.
type Resources struct {
	CPURequest    float64 `json:"cpuRequest"`
	MemoryRequest float64 `json:"memoryRequest"`
	MemoryLimit   float64 `json:"memoryLimit,omitempty"`
	// CPULimit is read, never recommended: a CPU request is kept at or
	// below it, as the API server requires.
	CPULimit float64 `json:"cpuLimit,omitempty"`
}

// Reasons a container is not sized.
const (
	// ReasonTooFewSamples: fewer samples than Options.MinSamples.
	ReasonTooFewSamples reason.Code = "too_few_samples"
	// ReasonBelowThreshold: the change is smaller than Options.Threshold.
	ReasonBelowThreshold reason.Code = "below_threshold"
)

// reasonRows describe the codes this package declares.
var reasonRows = []reason.Row{
	reason.NewRow(ReasonTooFewSamples, bySize, "not sized", "fewer usage samples of the container than --min-samples"),
	reason.NewRow(ReasonBelowThreshold, bySize, "not sized", "the recommendation differs from what the container reserves by less than --threshold"),
}

var bySize = []reason.Giver{reason.Size}

// ReasonRows returns the rows of the codes this package declares.
func ReasonRows() []reason.Row { return append([]reason.Row(nil), reasonRows...) }

// Recommendation is the sizing of one container.
type Recommendation struct {
	Container string `json:"container"`
	Pods      int    `json:"pods"`
	Samples   int    `json:"samples"`
	// Observed are the CPU percentile and the memory peak measured.
	ObservedCPU       float64   `json:"observedCPU"`
	ObservedMemoryMax float64   `json:"observedMemoryPeak"`
	Now               Resources `json:"now"`
	Recommended       Resources `json:"recommended"`
	// Capped says Options.MaxCPU or MaxMemory lowered the recommendation.
	Capped bool `json:"capped,omitempty"`
	// Reason says why nothing is recommended (Recommended is then Now).
	Reason reason.Code `json:"reason,omitempty"`
	// Message says it in words.
	Message string `json:"message,omitempty"`
}

// Recommend sizes one container from its usage, given what it reserves
// now. Memory is never recommended below the peak seen; CPU and memory
// are rounded up (1m, 1Mi).
func Recommend(u Usage, now Resources, o Options) Recommendation {
	r := Recommendation{Container: u.Container, Pods: u.Pods, Samples: min(len(u.CPU), len(u.Memory)), Now: now, Recommended: now}
	if r.Samples < o.MinSamples || r.Samples == 0 {
		r.Reason = ReasonTooFewSamples
		r.Message = fmt.Sprintf("%d samples of %d Pods; at least %d are needed (a longer window, or --watch for longer)", r.Samples, u.Pods, max(o.MinSamples, 1))
		return r
	}
	r.ObservedCPU = Percentile(u.CPU, o.CPUPercentile)
	r.ObservedMemoryMax = maxOf(u.Memory)
	cpu := roundUp(r.ObservedCPU, 0.001)
	if cpu < 0.001 {
		cpu = 0.001
	}
	memory := roundUp(r.ObservedMemoryMax*(1+o.MemoryHeadroom), 1<<20)
	if o.MaxCPU > 0 && cpu > o.MaxCPU {
		cpu, r.Capped = o.MaxCPU, true
	}
	if now.CPULimit > 0 && cpu > now.CPULimit {
		cpu, r.Capped = now.CPULimit, true
	}
	if o.MaxMemory > 0 && memory > o.MaxMemory {
		memory, r.Capped = o.MaxMemory, true
	}
	// Never below the peak: a cap below it gives the peak, and says so.
	if peak := roundUp(r.ObservedMemoryMax, 1<<20); memory < peak {
		memory = peak
	}
	rec := Resources{CPURequest: cpu, MemoryRequest: memory, CPULimit: now.CPULimit}
	// The memory limit keeps the template's limit-to-request ratio (the
	// headroom it chose for bursts); without one, the request doubled.
	ratio := 2.0
	if now.MemoryRequest > 0 && now.MemoryLimit > 0 {
		ratio = now.MemoryLimit / now.MemoryRequest
	}
	rec.MemoryLimit = roundUp(memory*ratio, 1<<20)
	if rec.MemoryLimit < memory {
		rec.MemoryLimit = memory
	}
	if !changed(now.CPURequest, rec.CPURequest, o.Threshold) && !changed(now.MemoryRequest, rec.MemoryRequest, o.Threshold) {
		r.Reason = ReasonBelowThreshold
		r.Message = fmt.Sprintf("the requests would change by less than %.0f%%", o.Threshold*100)
		return r
	}
	r.Recommended = rec
	return r
}

// changed reports a change from a to b of at least threshold (relative);
// anything from nothing set is a change.
func changed(a, b, threshold float64) bool {
	if a == 0 {
		return b != 0
	}
	return math.Abs(b-a)/a >= threshold
}

// Percentile is the p-th percentile (0 < p <= 1) of values, by the
// nearest rank: the smallest value at least p of the values do not
// exceed.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func maxOf(values []float64) float64 {
	m := 0.0
	for _, v := range values {
		m = max(m, v)
	}
	return m
}

// roundUp rounds v up to a multiple of unit.
func roundUp(v, unit float64) float64 {
	return math.Ceil(v/unit-1e-9) * unit
}

// Freed is what a recommendation frees (negative: adds) across a fleet of
// replicas: CPU cores and memory bytes requested.
func (r Recommendation) Freed(replicas int) (cpu, memory float64) {
	return (r.Now.CPURequest - r.Recommended.CPURequest) * float64(replicas), (r.Now.MemoryRequest - r.Recommended.MemoryRequest) * float64(replicas)
}
