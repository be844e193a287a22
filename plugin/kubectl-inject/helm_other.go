//go:build !linux

package main

import "os"

// helmStderr returns nil: only Linux lets a process reach its parent's
// stderr (/proc). Under Helm 4 elsewhere a failing post-renderer shows as
// `plugin "kubectl-inject" exited with error`; docs/gitops.md says how to see
// the message (the same command line as a pipe).
func helmStderr() *os.File { return nil }
