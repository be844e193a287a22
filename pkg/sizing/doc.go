// Package sizing computes a sidecar's resource requests from what it
// used: a percentile of its CPU over a window, its memory peak with
// headroom, and a memory limit that keeps the template's limit-to-request
// ratio. It refuses to guess: too few samples, or no measured container,
// is a reason, never a number. It is pure (samples in, a recommendation
// out); kubectl inject size reads the samples from the metrics API or
// Prometheus and writes the result as the template's override
// annotations.
package sizing
