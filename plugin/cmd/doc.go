// Package cmd is the full kubectl-inject command (the kinject-live
// binary): cobra flags, kubectl's resource arguments (cli-runtime), and the
// two front ends of the injection core: local manifests (--local, run by
// plugin/local, edited as text so every other byte survives) and live
// objects (pkg/live, patched the declarative way). The kubectl-inject
// binary serves --local command lines itself and hands the rest here.
//
// The command follows kubectl's Options pattern: NewOptions, then Complete
// (flags, kubeconfig, template; it runs Validate, pure and reporting every
// error at once, before it reads a file or the cluster) and Run
// (only the Options' fields and injected IOStreams). Run returns an error
// instead of exiting; Execute maps it to the process exit code.
package cmd
