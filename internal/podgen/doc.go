// Package podgen makes the Pods that the admission policy is checked with,
// against the core: seeded generated Pods (YAML and indented JSON, some
// injected beforehand by other profiles), the golden corpus's Pods and pod
// templates, and the suites of configs they are created under. The
// in-process check (pkg/admission) and the API-server differential test
// (test/admission) draw the same Pods from it.
package podgen
