package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/config"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// DefaultFieldManager is the field manager of every write.
const DefaultFieldManager = "kubectl-inject"

// Options holds the command's flags and what Complete derives from them.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// Flags are the injection's and --local's flags, shared with the
	// kubectl-inject front door (plugin/local) and read as every front end
	// reads them (pkg/config).
	config.Flags

	All           bool
	AllNamespaces bool

	FieldManager   string
	ServerSide     bool
	ForceConflicts bool
	Recreate       bool
	// AllowMissingReferences injects even where the sidecar's ConfigMaps,
	// Secrets or PersistentVolumeClaims are missing.
	AllowMissingReferences bool
	Concurrency            int
	QPS                    float64
	Burst                  int

	// Set by Complete.
	args             []string
	namespace        string
	enforceNamespace bool
	dryRun           dryrun.Strategy
	injector         *inject.Injector

	// local runs --local and reads the objects -f names: the --local front
	// end's own code (plugin/local), given by the main package.
	local config.Local
}

// NewOptions returns Options with their defaults; local is the --local
// front end (plugin/local's FrontEnd).
func NewOptions(streams genericiooptions.IOStreams, local config.Local) *Options {
	return &Options{
		local:        local,
		ConfigFlags:  genericclioptions.NewConfigFlags(true),
		IOStreams:    streams,
		Flags:        config.NewFlags(),
		FieldManager: DefaultFieldManager,
		Concurrency:  8,
		QPS:          DefaultQPS,
		Burst:        DefaultBurst,
	}
}

// The client's default rate limits, for a one-off bulk change: 1,000
// objects take about 3 s of client-side waiting (1 PATCH each). client-go's
// own defaults (5 requests/s, bursts of 10), which kubectl keeps for its
// requests, would take over 3 minutes; kubectl's discovery limits (50,
// 300) about 14 s. The API server's priority and fairness still applies;
// --qps and --burst lower them for a busy cluster.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// AddFlags registers the flags on c.
func (o *Options) AddFlags(c *cobra.Command) {
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	o.Flags.AddFlags(f)
	f.BoolVar(&o.All, "all", false, "Select all objects of the given types in the namespace")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Select objects in all namespaces")
	f.StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Name of the field manager for the change")
	f.BoolVar(&o.ServerSide, "server-side", false, "Send a server-side apply of only the injected fields (built-in kinds)")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "With --server-side: take over fields another manager owns")
	f.BoolVar(&o.Recreate, "recreate", false, "Delete a bare Pod and create it again with the sidecar (its containers restart)")
	f.BoolVar(&o.AllowMissingReferences, "allow-missing-references", false, "Inject even when the sidecar needs a ConfigMap, Secret or PersistentVolumeClaim that the object's namespace lacks (its Pods then wait for it)")
	f.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "How many live objects to process at once (--qps and --burst still apply)")
	f.Float64Var(&o.QPS, "qps", o.QPS, "Requests per second the client may send to the API server, shared by all concurrent objects (lower it on a busy cluster)")
	f.IntVar(&o.Burst, "burst", o.Burst, "Requests the client may send at once above --qps")
	o.wrapConfig(f)
	_ = c.RegisterFlagCompletionFunc("dry-run", fixedCompletion("none", "client", "server"))
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("yaml", "json", "name"))
	_ = c.RegisterFlagCompletionFunc("mode", fixedCompletion(string(inject.OptOut), string(inject.OptIn)))
	_ = c.RegisterFlagCompletionFunc("profile", completeProfiles(o.ConfigFlags))
}

// wrapConfig makes every client built from o.ConfigFlags (the patcher's,
// the resource builder's, template and completion lookups) use --qps and
// --burst: the values of the flags when given, else the defaults when
// the configuration sets no limit. A WrapConfigFn set before (tests count
// requests with one) still runs, after this one. Discovery gets the same
// limits in Complete when the flags are given.
func (o *Options) wrapConfig(f *pflag.FlagSet) {
	next := o.ConfigFlags.WrapConfigFn
	o.ConfigFlags.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		if f.Changed("qps") || cfg.QPS == 0 && cfg.Burst == 0 {
			cfg.QPS = float32(o.QPS)
		}
		if f.Changed("burst") || cfg.Burst == 0 {
			cfg.Burst = o.Burst
		}
		if cfg.WarningHandler == nil {
			cfg.WarningHandler = warningWriter(o.ErrOut)
		}
		if next != nil {
			cfg = next(cfg)
		}
		return cfg
	}
}

// Complete derives the working state from the flags: namespace, dry-run
// strategy and the injector (template plus settings).
func (o *Options) Complete(c *cobra.Command, args []string) error {
	o.args = args
	o.Flags.Complete(c.Flags())
	o.dryRun = o.DryRun
	if c.Flags().Changed("qps") {
		o.ConfigFlags.WithDiscoveryQPS(float32(o.QPS))
	}
	if c.Flags().Changed("burst") {
		o.ConfigFlags.WithDiscoveryBurst(o.Burst)
	}
	if !o.Local {
		var err error
		o.namespace, o.enforceNamespace, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return fmt.Errorf("read kubeconfig namespace: %w", err)
		}
	}
	if err := o.Validate(); err != nil {
		// report flag errors before touching files or the cluster
		return err
	}
	in, err := o.LoadInjector(o.configMapLookup, o.ErrOut)
	if err != nil {
		return err
	}
	o.injector = in
	return nil
}

// Validate checks the flags for consistency; it reports every problem at once.
func (o *Options) Validate() error {
	errs := o.Flags.Validate(o.args)
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if o.Concurrency < 1 {
		add("--concurrency must be at least 1")
	}
	if o.QPS < 0 {
		add("--qps must not be negative")
	}
	if o.Burst < 0 {
		add("--burst must not be negative")
	} else if o.Burst == 0 && o.QPS > 0 {
		add("--burst must be at least 1 when --qps is above 0")
	}
	if o.ForceConflicts && !o.ServerSide {
		add("--force-conflicts needs --server-side")
	}
	if o.FieldManager == "" {
		add("--field-manager must not be empty")
	}
	if o.Local {
		for _, flag := range []struct {
			name string
			set  bool
		}{{"--server-side", o.ServerSide}, {"--all", o.All}, {"--all-namespaces", o.AllNamespaces},
			{"--recreate", o.Recreate}} {
			if flag.set {
				add("%s needs a cluster; it cannot be used with --local", flag.name)
			}
		}
	} else {
		errs = append(errs, o.validateLive()...)
	}
	return errors.Join(errs...)
}

func (o *Options) validateLive() []error {
	var errs []error
	if o.InPlace {
		errs = append(errs, errors.New("--in-place rewrites local files; it needs --local"))
	}
	hasFiles := len(o.Filenames) > 0
	if !hasFiles && len(o.args) == 0 {
		errs = append(errs, errors.New("name the objects: TYPE/NAME, TYPE NAME..., TYPE -l SELECTOR, TYPE --all, or -f FILE (see --help)"))
	}
	if hasFiles && len(o.args) > 0 {
		errs = append(errs, errors.New("give either -f or TYPE/NAME arguments, not both"))
	}
	if o.All && o.Selector != "" {
		errs = append(errs, errors.New("--all and --selector cannot be combined"))
	}
	if o.enforceNamespace {
		if err := inject.ValidateNamespace(o.namespace); err != nil {
			errs = append(errs, fmt.Errorf("--namespace: %w", err))
		}
	}
	return errs
}

// Run injects (or checks) the selected objects.
func (o *Options) Run(ctx context.Context) error {
	if o.Local {
		return o.local.Run(&o.Flags, o.injector, config.Streams{In: o.In, Out: o.Out, ErrOut: o.ErrOut})
	}
	return o.runLive(ctx)
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
