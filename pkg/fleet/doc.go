// Package fleet builds the report of kubectl inject status: for listed
// workloads and Pods, which run the current template, which an older one,
// which none (and why), and which Pods have not been recreated since their
// workload's template changed. Pods injected at admission (their owner's
// template has no record) count for their owner too, a ReplicaSet alone or
// the Deployment above it. A terminating Pod is counted apart, neither
// current nor behind: it is going, whatever it runs.
//
// It is pure: it classifies objects already read (unstructured, as the
// dynamic client returns them) with the injection core's Inspect, so the
// same decisions and reason codes appear here as in every other report.
// Reading them (list calls in pages) is the command's job.
package fleet
