package cmd

import (
	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/pkg/version"
)

const example = `  # Inject the default Envoy sidecar into a Deployment
  kubectl inject deployment/web

  # A Pod owned by a controller: injects the owning Deployment (Pod -> ReplicaSet -> Deployment)
  kubectl inject pod/web-7d4b9c-x2x8q

  # Every Deployment and StatefulSet labelled app=web, in all namespaces
  kubectl inject deployments,statefulsets -l app=web -A

  # The live objects named in a manifest, with server-side apply
  kubectl inject -f app.yaml --server-side

  # Preview the change the server would make, as YAML
  kubectl inject deploy/web --dry-run=server -o yaml

  # Remove exactly what was injected
  kubectl inject deploy/web --uninject

  # A second sidecar as its own profile: its records and annotations are logs.sidecar.kinject.dev/*
  kubectl inject deploy/web --profile logs --template log-agent.yaml
  kubectl inject deploy/web --profile logs --uninject      # the default profile's sidecar stays
  kubectl inject deploy/web --uninject --all-profiles      # every profile's sidecar goes

  # Per workload overrides, declared by the template (the default one: image, cpu/memory requests and limits, concurrency)
  kubectl annotate deploy/web sidecar.kinject.dev/cpu-request=500m
  kubectl inject deploy/web                                # replaces exactly the changed values

  # Use a template from a file, or from a ConfigMap in the cluster (the seed's format)
  kubectl inject deploy/web --template sidecar.yaml
  kubectl inject deploy/web --template-configmap istio-system/envoy-initializer:config

  # Local files: print the injected manifest (comments and order kept), no cluster needed
  kubectl inject --local -f app.yaml > app.injected.yaml
  kubectl inject --local -f k8s/ -R --in-place

  # CI: fail when any manifest is not injected with the current template
  kubectl inject --local -f k8s/ -R --check

  # Many objects on a busy cluster: lower the client's rate limits (default: 200 requests/s, bursts of 400)
  kubectl inject deploy --all -n big --qps 50 --burst 100

  # A custom kind with a pod template
  kubectl inject rollouts.argoproj.io/web --pod-template-path Rollout.argoproj.io=spec.template`

// NewCmdInject returns the kubectl-inject command writing to streams.
func NewCmdInject(streams genericiooptions.IOStreams, local config.Local) *cobra.Command {
	return NewCommand(NewOptions(streams, local))
}

// NewCommand returns the command for o; tests use it to reach o's fields
// (for example ConfigFlags.WrapConfigFn).
func NewCommand(o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "kubectl-inject [TYPE[.VERSION][.GROUP] [NAME...] | TYPE[.VERSION][.GROUP]/NAME...] [flags]",
		Short: "Add a sidecar to the pod templates of live objects or local manifests",
		Long: `Add a sidecar (Envoy by default) to the pod templates of workloads.

Live objects are read from the API server and changed with a PATCH holding only
the difference (a strategic merge patch for built-in kinds, a resourceVersion
guarded merge patch for custom kinds), or with --server-side an apply of only
the injected fields. Nothing is sent when nothing changes. With --local, files
are edited as text: every byte outside the injected lines is kept.

Each object gets one line on stderr; the exit code is 1 when any object failed
(or, with --check, when any object would change).`,
		Example:      example,
		Version:      version.String(),
		SilenceUsage: true,
		// Execute prints the error once.
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl inject"},
		Args:          cobra.ArbitraryArgs,
		// For every subcommand too: -v is a persistent flag.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return setUpLogging(o.Verbosity, o.ErrOut)
		},
		RunE: func(c *cobra.Command, args []string) error {
			// Complete validates the flags before it reads a file or the cluster.
			err := o.Complete(c, args)
			if err == nil {
				err = o.Run(c.Context())
			}
			if o.Diff {
				err = config.DiffExit(err)
			}
			return err
		},
		ValidArgsFunction: o.completeArgs,
	}
	c.SetVersionTemplate("kubectl-inject {{.Version}}\n")
	c.SetIn(o.In)
	c.SetOut(o.Out)
	c.SetErr(o.ErrOut)
	o.AddFlags(c)
	o.Flags.AddVerbosityFlag(c.PersistentFlags())
	c.AddCommand(NewCmdPolicy(o.ConfigFlags, o.IOStreams), NewCmdStatus(o.ConfigFlags, o.IOStreams),
		NewCmdEnable(o.ConfigFlags, o.IOStreams), NewCmdDisable(o.ConfigFlags, o.IOStreams), NewCmdCheck(o.ConfigFlags, o.IOStreams),
		NewCmdRestart(o.ConfigFlags, o.IOStreams), NewCmdExplain(o.ConfigFlags, o.IOStreams), NewCmdSize(o.ConfigFlags, o.IOStreams))
	return c
}

// ExitError is an error that carries the exit code (see config.ExitError).
type ExitError = config.ExitError

// Execute runs c and returns the process exit code: 0 on success, 1 when any
// object failed or --check found a change, printing the error to
// streams.ErrOut as kubectl does.
func Execute(c *cobra.Command, streams genericiooptions.IOStreams) int {
	return config.ExitCode(c.Execute(), streams.ErrOut)
}
