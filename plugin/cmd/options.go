package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
)

// DefaultFieldManager is the field manager of every write.
const DefaultFieldManager = "kubectl-inject"

// Options holds the command's flags and what Complete derives from them.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	FilenameOptions resource.FilenameOptions
	Selector        string
	All             bool
	AllNamespaces   bool

	Local          bool
	InPlace        bool
	DryRun         string
	Output         string
	FieldManager   string
	ServerSide     bool
	ForceConflicts bool
	Uninject       bool
	Check          bool
	// ContinueOnError writes in place the documents that succeeded even
	// when others failed (those stay as they were).
	ContinueOnError bool
	Recreate        bool
	Concurrency     int
	QPS             float64
	Burst           int

	TemplateFile      string
	TemplateConfigMap string
	Mode              string
	Kinds             []string
	Native            bool
	Image             string
	PodTemplatePaths  []string
	InjectHostNetwork bool
	Strict            bool

	// Set by Complete.
	args             []string
	namespace        string
	enforceNamespace bool
	nativeSet        bool
	hostNetworkSet   bool
	dryRun           live.DryRun
	injector         *inject.Injector
	op               inject.Op
}

// NewOptions returns Options with kubectl's defaults.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{
		ConfigFlags:  genericclioptions.NewConfigFlags(true),
		IOStreams:    streams,
		DryRun:       "none",
		FieldManager: DefaultFieldManager,
		Concurrency:  8,
		QPS:          DefaultQPS,
		Burst:        DefaultBurst,
	}
}

// kubectl's client rate limits (client-go's own defaults, 5 and 10, are
// meant for controllers).
const (
	DefaultQPS   = 50
	DefaultBurst = 300
)

// AddFlags registers the flags on c.
func (o *Options) AddFlags(c *cobra.Command) {
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	f.StringSliceVarP(&o.FilenameOptions.Filenames, "filename", "f", nil, "Files, directories or URLs naming the objects (live) or holding the manifests (--local); - reads stdin")
	f.BoolVarP(&o.FilenameOptions.Recursive, "recursive", "R", false, "Process the directories given with -f recursively")
	f.StringVarP(&o.Selector, "selector", "l", "", "Label selector (live: which objects to read; --local: which objects to inject)")
	f.BoolVar(&o.All, "all", false, "Select all objects of the given types in the namespace")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Select objects in all namespaces")
	f.BoolVar(&o.Local, "local", false, "Edit the files given with -f instead of live objects; needs no cluster")
	f.BoolVar(&o.ContinueOnError, "continue-on-error", false, "With --in-place: write the documents that succeeded even when others failed (the failed ones stay as they were); the exit code is still 1")
	f.BoolVar(&o.InPlace, "in-place", false, "With --local: rewrite the files (atomically) instead of printing; nothing is written when any document fails")
	f.StringVar(&o.DryRun, "dry-run", o.DryRun, `"none", "client" (compute only) or "server" (the server runs the change without storing it)`)
	f.StringVarP(&o.Output, "output", "o", "", "Print the resulting objects: yaml, json or name")
	f.StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Name of the field manager for the change")
	f.BoolVar(&o.ServerSide, "server-side", false, "Send a server-side apply of only the injected fields (built-in kinds)")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "With --server-side: take over fields another manager owns")
	f.BoolVar(&o.Uninject, "uninject", false, "Remove exactly what an earlier injection added")
	f.BoolVar(&o.Check, "check", false, "Change nothing; exit 1 when any object is not injected with the current template")
	f.BoolVar(&o.Recreate, "recreate", false, "Delete a bare Pod and create it again with the sidecar (its containers restart)")
	f.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "How many live objects to process at once (--qps and --burst still apply)")
	f.Float64Var(&o.QPS, "qps", o.QPS, "Requests per second the client may send to the API server, shared by all concurrent objects; the default is kubectl's")
	f.IntVar(&o.Burst, "burst", o.Burst, "Requests the client may send at once above --qps; the default is kubectl's")
	o.wrapConfig(f)
	f.StringVar(&o.TemplateFile, "template", "", "Template file: a SidecarInjection, a template ConfigMap (data.config) or a partial Pod spec (default: the embedded Envoy sidecar)")
	f.StringVar(&o.TemplateConfigMap, "template-configmap", "", "Read the template from a ConfigMap in the cluster: [NAMESPACE/]NAME[:KEY] (key default: config)")
	f.StringVar(&o.Mode, "mode", "", `Policy: "opt-out" (inject unless annotated sidecar.kinject.dev/inject: "false"; default) or "opt-in"`)
	f.StringSliceVar(&o.Kinds, "kinds", nil, "Inject only these kinds (comma-separated)")
	f.BoolVar(&o.Native, "native", false, "Inject the sidecar as a native sidecar (init container with restartPolicy: Always); --native=false makes it a classic container")
	f.StringVar(&o.Image, "image", "", "Override the sidecar's image")
	f.StringSliceVar(&o.PodTemplatePaths, "pod-template-path", nil, "Where a custom kind keeps its pod template: Kind[.group]=field.path (repeatable)")
	f.BoolVar(&o.InjectHostNetwork, "inject-host-network", false, "Inject pods that use the host network too")
	f.BoolVar(&o.Strict, "strict", false, "Refuse a template that widens privileges (privileged, added capabilities, root, hostPath) instead of warning")
	_ = c.RegisterFlagCompletionFunc("dry-run", fixedCompletion("none", "client", "server"))
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("yaml", "json", "name"))
	_ = c.RegisterFlagCompletionFunc("mode", fixedCompletion(string(inject.OptOut), string(inject.OptIn)))
}

// wrapConfig makes every client built from o.ConfigFlags (the patcher's,
// the resource builder's, template and completion lookups) use --qps and
// --burst: the values of the flags when given, else kubectl's defaults when
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
	o.nativeSet = c.Flags().Changed("native")
	o.hostNetworkSet = c.Flags().Changed("inject-host-network")
	o.dryRun = live.DryRun(o.DryRun)
	if c.Flags().Changed("dry-run") && o.DryRun == "" {
		o.dryRun = live.DryRunClient
	}
	o.op = inject.OpInject
	if o.Uninject {
		o.op = inject.OpUninject
	}
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
	in, err := o.loadInjector()
	if err != nil {
		return err
	}
	o.injector = in
	return nil
}

// Validate checks the flags for consistency; it reports every problem at once.
func (o *Options) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch o.dryRun {
	case live.DryRunNone, live.DryRunClient, live.DryRunServer:
	default:
		add("--dry-run must be none, client or server, not %q", o.DryRun)
	}
	switch o.Output {
	case "", "yaml", "json", "name":
	default:
		add("--output must be yaml, json or name, not %q", o.Output)
	}
	if o.Mode != "" && o.Mode != string(inject.OptIn) && o.Mode != string(inject.OptOut) {
		add("--mode must be %s or %s, not %q", inject.OptOut, inject.OptIn, o.Mode)
	}
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
	if o.Check && o.InPlace {
		add("--check changes nothing; it cannot be combined with --in-place")
	}
	if o.ContinueOnError && !o.InPlace {
		add("--continue-on-error needs --in-place (without it, failed documents are printed unchanged anyway)")
	}
	if o.Local {
		errs = append(errs, o.validateLocal()...)
	} else {
		errs = append(errs, o.validateLive()...)
	}
	return errors.Join(errs...)
}

func (o *Options) validateLocal() []error {
	var errs []error
	if len(o.FilenameOptions.Filenames) == 0 {
		errs = append(errs, errors.New("--local needs the manifests: -f FILE|DIR|-"))
	}
	if len(o.args) > 0 {
		errs = append(errs, fmt.Errorf("--local reads files only; remove the arguments %q or drop --local", strings.Join(o.args, " ")))
	}
	for flag, set := range map[string]bool{"--server-side": o.ServerSide, "--all": o.All, "--all-namespaces": o.AllNamespaces,
		"--recreate": o.Recreate, "--template-configmap": o.TemplateConfigMap != "", "--dry-run=server": o.dryRun == live.DryRunServer} {
		if set {
			errs = append(errs, fmt.Errorf("%s needs a cluster; it cannot be used with --local", flag))
		}
	}
	if o.InPlace {
		for _, f := range o.FilenameOptions.Filenames {
			if f == "-" || isURL(f) {
				errs = append(errs, fmt.Errorf("--in-place cannot rewrite %q; give files or directories", f))
			}
		}
		if o.Output != "" {
			errs = append(errs, errors.New("--in-place writes the files; it cannot be combined with --output"))
		}
	}
	if o.Output == "json" || o.Output == "name" {
		errs = append(errs, errors.New("--local prints YAML as written; --output json and name are for live objects"))
	}
	return errs
}

func (o *Options) validateLive() []error {
	var errs []error
	if o.InPlace {
		errs = append(errs, errors.New("--in-place rewrites local files; it needs --local"))
	}
	hasFiles := len(o.FilenameOptions.Filenames) > 0
	if !hasFiles && len(o.args) == 0 {
		errs = append(errs, errors.New("name the objects: TYPE/NAME, TYPE NAME..., TYPE -l SELECTOR, TYPE --all, or -f FILE (see --help)"))
	}
	if hasFiles && len(o.args) > 0 {
		errs = append(errs, errors.New("give either -f or TYPE/NAME arguments, not both"))
	}
	if o.All && o.Selector != "" {
		errs = append(errs, errors.New("--all and --selector cannot be combined"))
	}
	return errs
}

// Run injects (or checks) the selected objects.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Local {
		return o.runLocal()
	}
	return o.runLive(ctx)
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
