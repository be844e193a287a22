package inject

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

// Action is what happened to one object.
type Action string

// Actions, in the words the report uses.
const (
	Injected   Action = "injected"   // the sidecar was added
	Updated    Action = "updated"    // an older injection was replaced by the current template
	Unchanged  Action = "unchanged"  // already injected with the current template
	Uninjected Action = "uninjected" // the injected parts were removed
	Skipped    Action = "skipped"    // left alone on purpose; Reason says why
	Failed     Action = "error"      // could not be processed; Message says why
)

// Reason is a stable snake_case code explaining a skip or an error: the
// code every command reports (reason.Code). Reasons appear in reports, KRM
// results and golden files, so they never change.
type Reason = reason.Code

// Reasons for skipping or failing; reasonRules says when each is given.
const (
	ReasonNotAWorkload       Reason = "not_a_workload"
	ReasonKindNotSelected    Reason = "kind_not_selected"
	ReasonNamespaceNotSelect Reason = "namespace_not_selected"
	ReasonLabelsNotSelected  Reason = "labels_not_selected"
	ReasonOptedOut           Reason = "opted_out"
	ReasonNotOptedIn         Reason = "not_opted_in"
	ReasonHostNetwork        Reason = "host_network"
	ReasonOtherMesh          Reason = "other_mesh"
	ReasonMirrorPod          Reason = "mirror_pod"
	ReasonNotInjected        Reason = "not_injected"
	ReasonConflict           Reason = "conflict"
	ReasonInvalidObject      Reason = "invalid_object"
	ReasonInvalidStatus      Reason = "invalid_status"
	ReasonInvalidYAML        Reason = "invalid_yaml"
	ReasonTooLarge           Reason = "too_large"
	// ReasonNotAnObject: an item of a kind: List that is null or not a
	// mapping; it passes through untouched.
	ReasonNotAnObject Reason = "not_an_object"
	// ReasonNotKubernetes: a mapping with neither apiVersion nor kind (a CI
	// workflow, a values file). An error for a file named on its own; front
	// ends walking directories report it as a skip.
	ReasonNotKubernetes Reason = "not_kubernetes"
	// ReasonRunsToCompletion: a classic sidecar refused for a Pod that runs
	// to completion.
	ReasonRunsToCompletion Reason = "runs_to_completion"
)

// Reasons the live commands give besides the core's (pkg/live): they
// concern objects in a cluster, which the core never sees.
const (
	// ReasonBarePod: a Pod without a controller cannot gain containers.
	ReasonBarePod Reason = "bare_pod"
	// ReasonImmutableTemplate: the kind's pod template cannot change (Job).
	ReasonImmutableTemplate Reason = "immutable_template"
	// ReasonOwnerNotFound: following the ownerReferences of a Pod failed.
	ReasonOwnerNotFound Reason = "owner_not_found"
	// ReasonMissingReference: the injected parts need a ConfigMap, Secret
	// or PersistentVolumeClaim that the object's namespace lacks; its Pods
	// would never start, so nothing is sent.
	ReasonMissingReference Reason = "missing_reference"
	// ReasonSystemNamespace: the object is in a system namespace that the
	// command line selected (--all, -A, -l) without naming it.
	ReasonSystemNamespace Reason = "system_namespace"
)

// MirrorPodAnnotation marks the API server's mirror of a static pod, which
// the kubelet creates from a manifest of its own (ReasonMirrorPod).
const MirrorPodAnnotation = "kubernetes.io/config.mirror"

// otherMeshProxies are containers of other meshes; a pod that has one is
// already meshed and is left alone.
var otherMeshProxies = []string{"istio-proxy", "linkerd-proxy"}

// OtherMeshProxies returns the container names of other meshes' proxies: a
// pod that has one is skipped (ReasonOtherMesh).
func OtherMeshProxies() []string { return append([]string(nil), otherMeshProxies...) }

// AtAdmission is what the admission policy does with a Pod the core
// reports with a reason.
type AtAdmission string

// What the admission policy does, by reason.
const (
	// AdmissionMarked: the Pod is left as created and the code is written
	// in its skip annotation (SkippedAnnotationFor).
	AdmissionMarked AtAdmission = "marked"
	// AdmissionRefused: the Pod is left as created, marked with the code
	// and the core's message, which the validating policy returns as a
	// warning.
	AdmissionRefused AtAdmission = "refused"
	// AdmissionUnmarked: the Pod is left as created, without a mark.
	AdmissionUnmarked AtAdmission = "unmarked"
	// AdmissionUnseen: the policy's binding never selects the Pod.
	AdmissionUnseen AtAdmission = "unseen"
	// AdmissionNone: the reason concerns objects or files, never a Pod at
	// admission.
	AdmissionNone AtAdmission = ""
)

// ReasonRule is one row of the table of reasons: the code, whether it
// skips or fails the object, when it is given, what the admission policy
// does with such a Pod, and what gives it (the core, or only the live
// commands, and the other commands that report it too). The front ends,
// the policy compiler and the documentation read the same rows.
type ReasonRule struct {
	Reason Reason
	// Outcomes are the actions the code comes with: Skipped, Failed, or
	// both (a front end walking directories skips what a file named on
	// its own fails).
	Outcomes []Action
	// When says when the code is given, in a sentence's words.
	When        string
	AtAdmission AtAdmission
	// By are what give the code: reason.Core, or reason.Live when only
	// the live commands give it (pkg/live, about an object in the
	// cluster), then the other commands that report it too.
	By []reason.Giver
	// Explain and ExplainHint are what kubectl inject explain says of a
	// Pod the admission policy left alone with the code, and what to do:
	// {annotation} is the profile's inject annotation, {profile-flag} its
	// --profile flag (none for the default profile), {why} the core's
	// message. Without them, explain says when the code is given.
	Explain, ExplainHint string
}

// Explained is what explain says of a Pod the admission policy of profile
// left alone with the rule's code, the core's message why, and the hint.
func (r ReasonRule) Explained(profile, why string) (message, hint string) {
	if r.Explain == "" {
		return "left alone (" + string(r.Reason) + "): " + r.When, r.ExplainHint
	}
	flag := ""
	if profile != "" {
		flag = " --profile " + profile
	}
	fill := strings.NewReplacer("{annotation}", naming.InjectAnnotationFor(profile), "{profile-flag}", flag, "{why}", why)
	return fill.Replace(r.Explain), fill.Replace(r.ExplainHint)
}

// LiveOnly: only the live commands give the code; the core never does.
func (r ReasonRule) LiveOnly() bool { return !slices.Contains(r.By, reason.Core) }

// Row is the rule as the table of every command's reasons shows it.
func (r ReasonRule) Row() reason.Row {
	outcomes := make([]string, len(r.Outcomes))
	for i, a := range r.Outcomes {
		outcomes[i] = string(a)
	}
	return reason.Row{Code: r.Reason, By: r.By, Outcome: strings.Join(outcomes, " or "), When: r.When}
}

// reasonRules are every reason code, skips first, in the order the core
// decides them.
var reasonRules = []ReasonRule{
	{
		Reason: ReasonNotAWorkload, Outcomes: skipsIt, AtAdmission: AdmissionNone, By: byCore,
		When: "the object has no pod template the core knows (and no pod-template path names one)",
	},
	{
		Reason: ReasonKindNotSelected, Outcomes: skipsIt, AtAdmission: AdmissionNone, By: byCore,
		When: "its kind or API group is not in the settings' kinds or apiGroups",
	},
	{
		Reason: ReasonNamespaceNotSelect, Outcomes: skipsIt, AtAdmission: AdmissionUnseen, By: byCoreAndAdmission,
		When: "its namespace is not in the settings' namespaces, or is excluded",
	},
	{
		Reason: ReasonLabelsNotSelected, Outcomes: skipsIt, AtAdmission: AdmissionUnseen, By: byCoreAndAdmission,
		When: "its labels do not match the settings' selector",
	},
	{
		Reason: ReasonOptedOut, Outcomes: skipsIt, AtAdmission: AdmissionMarked, By: byCore,
		When:        `the object or its pod template is annotated sidecar.kinject.dev/inject: "false"`,
		Explain:     `opted out: the annotation {annotation} is "false"`,
		ExplainHint: "remove the annotation {annotation} from the Pod (its workload's pod template)",
	},
	{
		Reason: ReasonNotOptedIn, Outcomes: skipsIt, AtAdmission: AdmissionUnmarked, By: byCore,
		When:        `opt-in mode, and neither the inject annotation nor the seed's initializer.kubernetes.io/envoy is "true"`,
		Explain:     `not opted in: the policy's mode is opt-in and the annotation {annotation} is not "true"`,
		ExplainHint: `annotate the Pod's template {annotation}: "true"`,
	},
	{
		Reason: ReasonHostNetwork, Outcomes: skipsIt, AtAdmission: AdmissionMarked, By: byCore,
		When:        "the pod uses the host's network (unless injectHostNetwork)",
		Explain:     "the Pod uses the host's network: a sidecar would share the node's ports",
		ExplainHint: "kubectl inject policy --apply --inject-host-network{profile-flag} (for every such Pod)",
	},
	{
		Reason: ReasonOtherMesh, Outcomes: skipsIt, AtAdmission: AdmissionMarked, By: byCore,
		When:        "an istio-proxy or linkerd-proxy is already there",
		Explain:     "the Pod already has another mesh's proxy (" + strings.Join(otherMeshProxies, " or ") + ")",
		ExplainHint: "remove the other mesh's injection first",
	},
	{
		Reason: ReasonMirrorPod, Outcomes: skipsIt, AtAdmission: AdmissionMarked, By: byCore,
		When: "the pod is the mirror of a static pod (annotated " + MirrorPodAnnotation + "): the kubelet runs the static pod's manifest, not this object",
	},
	{
		Reason: ReasonNotInjected, Outcomes: skipsIt, AtAdmission: AdmissionNone, By: byCoreAndRestart,
		When: "uninject: the object carries no status record; restart: the Pod runs no sidecar to upgrade in place",
	},
	{
		Reason: ReasonNotAnObject, Outcomes: skipsIt, AtAdmission: AdmissionNone, By: byCore,
		When: "a kind: List item that is null or not a mapping (passed through untouched)",
	},
	{
		Reason: ReasonNotKubernetes, Outcomes: skipsOrFailsIt, AtAdmission: AdmissionNone, By: byCore,
		When: "a mapping with neither apiVersion nor kind: skipped in directory walks, an error for a file named on its own",
	},
	{
		Reason: ReasonConflict, Outcomes: failsIt, AtAdmission: AdmissionRefused, By: byCore,
		When:        "a container, volume, port, label or annotation of the template's is already there, not injected by this profile",
		Explain:     "conflict: {why}",
		ExplainHint: "change the Pod (or the template) so that they do not clash",
	},
	{
		Reason: ReasonInvalidObject, Outcomes: failsIt, AtAdmission: AdmissionRefused, By: byCoreAndRestart,
		When:        "the object cannot be injected as written (an override annotation's value of the wrong type, a malformed field); restart: a Pod it could not read or inject",
		Explain:     "a value the core refuses: {why}",
		ExplainHint: "fix the annotation the message names",
	},
	{
		Reason: ReasonInvalidStatus, Outcomes: failsIt, AtAdmission: AdmissionRefused, By: byCore,
		When:        "a status record that is not as kubectl-inject writes it",
		Explain:     "a record it cannot read: {why}",
		ExplainHint: "remove or repair the annotation the message names",
	},
	{
		Reason: ReasonRunsToCompletion, Outcomes: failsIt, AtAdmission: AdmissionRefused, By: byCore,
		When:        "a classic sidecar for a pod that runs to completion (Job, CronJob, restartPolicy Never or OnFailure)",
		Explain:     "a classic sidecar would keep a Pod that runs to completion running: {why}",
		ExplainHint: "kubectl inject policy --apply --native{profile-flag} (a native sidecar stops once the app has exited)",
	},
	{
		Reason: ReasonInvalidYAML, Outcomes: failsIt, AtAdmission: AdmissionNone, By: byCore,
		When: "the document is not valid YAML",
	},
	{
		Reason: ReasonTooLarge, Outcomes: failsIt, AtAdmission: AdmissionNone, By: byCore,
		When: "the document is larger than the limit for one object",
	},
	{
		Reason: ReasonSystemNamespace, Outcomes: skipsIt, AtAdmission: AdmissionNone, By: byLiveAdmissionRestartAndStatus,
		When: "the object is in a system namespace (kube-system, kube-public, kube-node-lease) that --all, -A or -l reached without naming it (restart and status: -n NAMESPACE names it; the admission policy: --namespaces)",
	},
	{
		Reason: ReasonBarePod, Outcomes: failsIt, AtAdmission: AdmissionNone, By: byLiveAndRestart,
		When: "a Pod without a controller: a running Pod cannot gain or lose containers (restart --recreate creates it again)",
	},
	{
		Reason: ReasonImmutableTemplate, Outcomes: failsIt, AtAdmission: AdmissionNone, By: byLive,
		When: "the kind's pod template cannot change once created (a Job)",
	},
	{
		Reason: ReasonOwnerNotFound, Outcomes: failsIt, AtAdmission: AdmissionNone, By: byLive,
		When: "following the ownerReferences of a Pod to its workload failed",
	},
	{
		Reason: ReasonMissingReference, Outcomes: failsIt, AtAdmission: AdmissionNone, By: byLiveExplainAndStatus,
		When: "the injected parts need a ConfigMap, Secret or PersistentVolumeClaim the object's namespace lacks; nothing is sent",
	},
}

// The outcomes and givers of the table's rows.
var (
	byCore                          = []reason.Giver{reason.Core}
	byLive                          = []reason.Giver{reason.Live}
	byCoreAndAdmission              = []reason.Giver{reason.Core, reason.Admission}
	byCoreAndRestart                = []reason.Giver{reason.Core, reason.Restart}
	byLiveAndRestart                = []reason.Giver{reason.Live, reason.Restart}
	byLiveAdmissionRestartAndStatus = []reason.Giver{reason.Live, reason.Admission, reason.Restart, reason.Status}
	byLiveExplainAndStatus          = []reason.Giver{reason.Live, reason.Explain, reason.Status}

	skipsIt        = []Action{Skipped}
	failsIt        = []Action{Failed}
	skipsOrFailsIt = []Action{Skipped, Failed}
)

// ReasonRules returns the table of reasons.
func ReasonRules() []ReasonRule { return append([]ReasonRule(nil), reasonRules...) }

// ReasonRuleOf returns the row of the table of reasons for code.
func ReasonRuleOf(code Reason) (ReasonRule, bool) {
	for _, r := range reasonRules {
		if r.Reason == code {
			return r, true
		}
	}
	return ReasonRule{}, false
}

// ReasonsAtAdmission returns the codes the admission policy handles as at
// says, in the table's order.
func ReasonsAtAdmission(at AtAdmission) []Reason {
	var out []Reason
	for _, r := range reasonRules {
		if r.AtAdmission == at {
			out = append(out, r.Reason)
		}
	}
	return out
}

// ReasonsMarkdown is the table of reasons as the documentation shows it.
func ReasonsMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | outcome | when | at admission | given by |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range reasonRules {
		outcomes := make([]string, len(r.Outcomes))
		for i, a := range r.Outcomes {
			outcomes[i] = string(a)
		}
		at := string(r.AtAdmission)
		if at == "" {
			at = "-"
		}
		by := "the core (every front end)"
		if r.LiveOnly() {
			by = "the live commands"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.Reason, strings.Join(outcomes, ", "), r.When, at, by)
	}
	return b.String()
}
