package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kinject/kubectl-inject/pkg/config"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

const restartExample = `  # What would be restarted in the namespace, and how (nothing is changed)
  kubectl inject restart --dry-run

  # Every namespace (but the system ones), at most 3 workloads rolling at once
  kubectl inject restart -A --max-in-flight 3

  # After an upgrade (kubectl inject policy --apply --image ...): current is
  # what the installed policy injects
  kubectl inject restart -A

  # "current" is another template than the installed policy's
  kubectl inject restart -A --template sidecar-v2.yaml

  # Some workloads only, with the final report as JSON
  kubectl inject restart deploy -l tier=front -o json`

// InterruptedCode is the exit code of a restart stopped by SIGINT or
// SIGTERM (128 + SIGINT, as shells report it).
const InterruptedCode = 130

// RestartOptions are the flags of kubectl inject restart.
type RestartOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	Flags            config.Flags
	AllNamespaces    bool
	DryRunPlan       bool
	MaxInFlight      int
	ProgressDeadline time.Duration
	Recreate         bool
	// Strategy is how Pods get the current sidecar: rollout.StrategyAuto,
	// StrategyInPlace or StrategyRecreate.
	Strategy string
	// Drain takes each Pod's proxy out of service with the template's
	// drain step before its upgrade in place (--drain, on by default).
	Drain        bool
	FieldManager string
	// Signals, when set, replaces SIGINT and SIGTERM (tests): the first
	// value stops new starts, the second stops waiting.
	Signals <-chan os.Signal
}

// NewCmdRestart returns the restart subcommand.
func NewCmdRestart(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &RestartOptions{ConfigFlags: configFlags, IOStreams: streams, Flags: config.NewFlags(),
		MaxInFlight: rollout.DefaultMaxInFlight, ProgressDeadline: 10 * time.Minute, Strategy: rollout.StrategyAuto, Drain: true, FieldManager: "kubectl-inject"}
	c := &cobra.Command{
		Use:   "restart [TYPE[/NAME]...] [flags]",
		Short: "Bring the Pods that run an outdated or missing sidecar to the current template, in waves",
		Long: `Bring every workload whose Pods run an outdated or missing sidecar (the rows
kubectl inject status reports as outdated or with Pods behind) to the current
template:

  - injected at admission, or a StatefulSet or DaemonSet with the OnDelete
    strategy, whose Pods differ from the current template only in the
    sidecar's image: each Pod is upgraded in place: drained first (the
    template's drain step takes its proxy out of service, and restart waits
    until no EndpointSlice lists the Pod ready), then one PATCH of the image
    (the kubelet restarts the sidecar alone, the app keeps running), waited
    on until Ready on the new image and listed again, and rolled back to
    its old image if it is not within --progress-deadline; as many Pods of a
    workload at once as its maxUnavailable and PodDisruptionBudgets allow
    (a Deployment of one replica, and a Pod on a kubelet older than v1.32.0,
    are recreated instead; --strategy recreate recreates them all);
  - injected at admission: a rollout restart (the kubectl.kubernetes.io/restartedAt
    annotation on the pod template, as kubectl rollout restart sets it);
  - injected through its template: injection with the current template, which
    rolls it;
  - a StatefulSet or DaemonSet with the OnDelete strategy, or a ReplicaSet without
    a Deployment: its Pods that are behind are deleted one at a time, each
    replacement waited on until Ready;
  - a rollout already under way (an earlier run) is waited on, not restarted;
  - bare Pods and Jobs are reported and left alone (--recreate deletes and
    creates bare Pods again).

At most --max-in-flight workloads roll at once, across namespaces; each is
waited on until its rollout completes, no Pod of an older template left
(terminating ones included), or its progress deadline passes (a
Deployment's progressDeadlineSeconds, otherwise --progress-deadline without
progress). The first failure starts nothing more, lets the workloads in flight
finish, and exits 1 naming the workload and the reason. Run it again to go on
with what is still behind. SIGINT (Ctrl-C) also starts nothing more and lets
those in flight finish (a second SIGINT stops waiting; the controllers finish
the rollouts), then exits 130.

Progress goes to stderr, a line as each workload starts and ends; -o json
prints the final report on stdout; --dry-run prints the plan and changes
nothing. With -A, system namespaces are left out unless -n names one. The RBAC
it needs is in docs/restart.md.

"Current" is what the cluster runs: the template and settings of the
profile's installed admission policy, else the embedded default;
--template or --template-configmap says otherwise, and the other template
flags (--image, --native, ...) apply over either. The first line on stderr
says which. When the installed policies cannot be read, restart stops
rather than roll the fleet to a guess.`,
		Example:       restartExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, args []string) error {
			o.Flags.Complete(c.Flags())
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(c.Context(), args)
		},
	}
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Restart in all namespaces (system namespaces only with -n)")
	f.StringVarP(&o.Flags.Selector, "selector", "l", "", "Only workloads whose labels match this selector")
	f.StringVarP(&o.Flags.Output, "output", "o", "", "json: the final report (or, with --dry-run, the plan) on stdout")
	f.BoolVar(&o.DryRunPlan, "dry-run", false, "Print the plan and change nothing")
	f.IntVar(&o.MaxInFlight, "max-in-flight", o.MaxInFlight, "Workloads rolling at once, across namespaces")
	f.DurationVar(&o.ProgressDeadline, "progress-deadline", o.ProgressDeadline, "Fail a workload whose rollout makes no progress for this long")
	f.BoolVar(&o.Recreate, "recreate", false, "Delete and create again the bare Pods that are behind")
	f.StringVar(&o.Strategy, "strategy", o.Strategy, "in-place|recreate|auto: upgrade the sidecar's image (and cpu and memory, by resize) in place in running Pods, recreate the Pods, or in place where Kubernetes allows it")
	f.BoolVar(&o.Drain, "drain", o.Drain, "Take each Pod's proxy out of service (the template's drain step) before upgrading it in place; false upgrades it while its Services still send to it")
	f.StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Field manager of the patches")
	o.Flags.AddTemplateFlags(f)
	addStaticFlag(c, &o.Flags)
	_ = c.RegisterFlagCompletionFunc("profile", completeProfiles(o.ConfigFlags))
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("json"))
	_ = c.RegisterFlagCompletionFunc("strategy", fixedCompletion(rollout.Strategies...))
	return c
}

// Validate checks the flags and arguments; it reports every problem.
func (o *RestartOptions) Validate(args []string) error {
	var errs []error
	switch o.Flags.Output {
	case "", "json":
	default:
		errs = append(errs, fmt.Errorf("--output must be json, not %q", o.Flags.Output))
	}
	if !slices.Contains(rollout.Strategies, o.Strategy) {
		errs = append(errs, fmt.Errorf("--strategy must be one of %s, not %q", strings.Join(rollout.Strategies, ", "), o.Strategy))
	}
	if o.MaxInFlight < 1 {
		errs = append(errs, errors.New("--max-in-flight must be at least 1"))
	}
	if o.ProgressDeadline <= 0 {
		errs = append(errs, errors.New("--progress-deadline must be positive"))
	}
	if _, err := parseStatusArgs(args); err != nil {
		errs = append(errs, fmt.Errorf("%s", replaceCommand(err.Error())))
	}
	errs = append(errs, o.Flags.ValidateTemplateFlags()...)
	return errors.Join(errs...)
}

func replaceCommand(s string) string {
	return strings.Replace(s, "kubectl inject status shows", "kubectl inject restart handles", 1)
}

// Run reads the fleet, plans, and (unless --dry-run) restarts.
func (o *RestartOptions) Run(ctx context.Context, args []string) error {
	filter, _ := parseStatusArgs(args)
	shown, err := labels.Parse(o.Flags.Selector)
	if err != nil {
		return fmt.Errorf("--selector %q: %w", o.Flags.Selector, err)
	}
	namespace, named := "", false
	if !o.AllNamespaces {
		if namespace, named, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return fmt.Errorf("read kubeconfig namespace: %w", err)
		}
	}
	cfg, client, err := clusterClient(o.ConfigFlags)
	if err != nil {
		return err
	}
	// Strict: a restart to a guessed template would roll the fleet.
	cur, err := readCurrent(ctx, &o.Flags, client, serverMetrics(o.ConfigFlags), clusterConfigMaps(o.ConfigFlags), "", true, false, nil)
	if err != nil {
		return err
	}
	in, err := config.NewInjector(cur.Template, cur.Settings, io.Discard)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.ErrOut, currentOf(in, cur))

	// hard ends every wait; the cache lives as long.
	hard, cancel := context.WithCancel(ctx)
	defer cancel()
	fc := newRestartCache(client, namespace)
	if err := fc.start(hard); err != nil {
		return err
	}
	objs := fc.objects()
	rows := selectRows(fleet.Build(in, objs), filter, matchingLabels(objs, shown))
	markWaiting(hard, client, in, rows, objs)
	decisions := &rollout.Decisions{}
	steps := rollout.Plan(rows, objectLookup(objs), rollout.PlanOptions{
		Recreate: o.Recreate,
		// -n NAMESPACE names a system namespace; -A and the
		// kubeconfig's namespace do not.
		SystemNamespaces: named && o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "",
		Strategy:         o.Strategy, Injector: in,
		Pods:        func(w *unstructured.Unstructured) []*unstructured.Unstructured { return fc.owned(w).Pods },
		NodeVersion: nodeVersions(hard, client),
		Decisions:   decisions,
	})
	if o.DryRunPlan {
		return o.printPlan(steps)
	}
	o.announce(steps)
	drain := drainOf(in.Template(), o.Drain)
	if why := noDrainWarning(steps, in.Template(), o.Drain); why != "" {
		fmt.Fprintln(o.ErrOut, why)
	}

	stop := make(chan struct{})
	signals := o.Signals
	if signals == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		signals = ch
	}
	pr := &restartPrinter{w: o.ErrOut}
	go func() {
		for n := 1; ; n++ {
			select {
			case <-signals:
			case <-hard.Done():
				return
			}
			if n == 1 {
				pr.interrupted()
				close(stop)
				continue
			}
			cancel()
			return
		}
	}()
	mover := &restartMover{
		cache: fc, client: client, injector: in, deadline: o.ProgressDeadline, now: time.Now,
		drain: drain, caller: portForwardCaller{config: cfg}, slots: make(chan struct{}, o.MaxInFlight), decisions: decisions,
		patcher: &live.Patcher{
			Injector: in, Op: inject.OpInject, Client: client, Mapper: builtinMapper(),
			FieldManager: o.FieldManager, References: &live.ReferenceChecker{Client: client},
			// a bare Pod's shutdown may take its grace period: bounded as
			// every other wait.
			RecreateTimeout: o.ProgressDeadline,
		},
	}
	runner := rollout.Runner{Mover: mover, MaxInFlight: o.MaxInFlight, Progress: pr.event, Stop: stop}
	res := runner.Run(hard, steps)
	return o.finish(res, pr.wasInterrupted())
}

// objectLookup finds listed objects by namespace, kind and name.
func objectLookup(objs []*unstructured.Unstructured) rollout.Object {
	byKey := map[rowKey]*unstructured.Unstructured{}
	for _, o := range objs {
		byKey[rowKey{o.GetNamespace(), o.GetKind(), o.GetName()}] = o
	}
	return func(namespace, kind, name string) *unstructured.Unstructured {
		return byKey[rowKey{namespace, kind, name}]
	}
}

// finish prints the report and says how the run ended.
func (o *RestartOptions) finish(res rollout.Result, signalled bool) error {
	if o.Flags.Output == "json" {
		if err := printJSON(o.Out, restartReport(res)); err != nil {
			return err
		}
	}
	c := res.Counts()
	fmt.Fprintf(o.ErrOut, "restart: %d done, %d failed, %d not started, %d left as they are; at most %d rolled at once\n",
		c[rollout.StateDone], c[rollout.StateFailed], c[rollout.StateNotStarted], c[rollout.StateReported], res.MaxInFlight)
	switch {
	case signalled || res.Interrupted:
		err := errors.New("restart interrupted: nothing more was started, the rest are as they were; run it again to go on")
		return &ExitError{Code: InterruptedCode, Err: errors.Join(err, res.Err)}
	case res.Err != nil:
		return &ExitError{Code: 1, Err: fmt.Errorf("restart stopped at the first failed rollout; run it again once fixed to go on: %w", res.Err)}
	}
	return nil
}
