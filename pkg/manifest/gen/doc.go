// Package gen writes realistic manifests for benchmarks and load tests:
// Deployments with labels, two containers, probes, resources, a volume and
// comments, each with a Service and a ConfigMap.
package gen
