// Command floor is the performance floor for kubectl-inject: a streaming
// no-op that reads a YAML stream one document at a time with yaml.v3
// (go.yaml.in/yaml/v3, a Decoder into yaml.Node) and writes each document
// back to stdout with a fresh Encoder, changing nothing. Its memory is bounded
// by the largest document, not by the stream.
//
// Usage:
//
//	floor [FILE]    # reads stdin when FILE is omitted
//
// hack/bench runs it as a subprocess beside kubectl-inject and inject-fn.
package main
