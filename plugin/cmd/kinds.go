package cmd

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// workloadKind is a kind of object that holds a pod template or is a Pod:
// one row per kind, read by every command that lists, names, restarts or
// completes them.
type workloadKind struct {
	kind string
	gvr  schema.GroupVersionResource
	// aliases are the names it answers to on the command line, as kubectl
	// spells them (singular, plural, short name); KIND.GROUP too.
	aliases []string
	// rolls says how its Pods come to run a new pod template.
	rolls string
	// listed: status, restart, size and explain list it, in this order
	// (ReplicaSets and Jobs a Deployment or CronJob controls are folded
	// into it); the others are only offered to complete a TYPE.
	listed bool
	// records: its pod template carries the status records of injection
	// (--profile completion reads them).
	records bool
}

var (
	appsV1  = schema.GroupVersion{Group: "apps", Version: "v1"}
	batchV1 = schema.GroupVersion{Group: "batch", Version: "v1"}
	coreV1  = schema.GroupVersion{Version: "v1"}
)

var workloadKinds = []workloadKind{
	{"Deployment", appsV1.WithResource("deployments"), []string{"deployment", "deployments", "deploy"},
		"a rollout (kubectl rollout restart)", true, true},
	{"StatefulSet", appsV1.WithResource("statefulsets"), []string{"statefulset", "statefulsets", "sts"},
		"a rollout; with updateStrategy OnDelete, its Pods deleted one at a time", true, true},
	{"DaemonSet", appsV1.WithResource("daemonsets"), []string{"daemonset", "daemonsets", "ds"},
		"a rollout; with updateStrategy OnDelete, its Pods deleted one at a time", true, true},
	{"ReplicaSet", appsV1.WithResource("replicasets"), []string{"replicaset", "replicasets", "rs"},
		"its Pods deleted (or its Deployment's rollout)", true, false},
	{"CronJob", batchV1.WithResource("cronjobs"), []string{"cronjob", "cronjobs", "cj"},
		"its next Job", true, true},
	{"Job", batchV1.WithResource("jobs"), []string{"job", "jobs"},
		"never: a Job's pod template cannot change", true, false},
	{"Pod", coreV1.WithResource("pods"), []string{"pod", "pods", "po"},
		"deleted, and made again by its controller", true, false},
	{"ReplicationController", coreV1.WithResource("replicationcontrollers"), []string{"replicationcontroller", "replicationcontrollers", "rc"},
		"its Pods deleted", false, false},
	{"PodTemplate", coreV1.WithResource("podtemplates"), []string{"podtemplate", "podtemplates"},
		"never: Pods are made from it by what reads it", false, false},
}

// statusResources are the listed kinds, in their order.
var statusResources = kindsWhere(func(k workloadKind) bool { return k.listed })

// profileKinds are the kinds whose pod templates carry status records.
var profileKinds = gvrsOf(kindsWhere(func(k workloadKind) bool { return k.records }))

// workloadTypes are offered when no TYPE has been typed yet.
var workloadTypes = resourceNames(workloadKinds)

// podTemplates are the pod templates' paths of the listed kinds (nil for
// a Pod), by kind: the core's.
var podTemplates = func() map[string][]string {
	out := map[string][]string{}
	for _, k := range statusResources {
		// TestWorkloadKinds holds every kind of the table to one the
		// core injects.
		out[k.kind], _ = inject.BuiltinPodTemplatePath(k.gvr.Group, k.kind)
	}
	return out
}()

func kindsWhere(keep func(workloadKind) bool) []workloadKind {
	var out []workloadKind
	for _, k := range workloadKinds {
		if keep(k) {
			out = append(out, k)
		}
	}
	return out
}

func gvrsOf(kinds []workloadKind) []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, len(kinds))
	for i, k := range kinds {
		out[i] = k.gvr
	}
	return out
}

func resourceNames(kinds []workloadKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.gvr.Resource
	}
	return out
}

// listedKind is the listed kind whose resource (resource != "") or kind
// (kind != "") is the one given.
func listedKind(resource, kind string) (workloadKind, bool) {
	for _, k := range statusResources {
		if (resource != "" && k.gvr.Resource == resource) || (kind != "" && k.kind == kind) {
			return k, true
		}
	}
	return workloadKind{}, false
}

// kindOf is the kind of a listed resource ("deployments": "Deployment");
// "Pod" for any other.
func kindOf(resource string) string {
	if k, ok := listedKind(resource, ""); ok {
		return k.kind
	}
	return "Pod"
}

// resourceOf is the resource of a listed kind, "" for another.
func resourceOf(kind string) string {
	k, _ := listedKind("", kind)
	return k.gvr.Resource
}

// gvrOf is the resource of a listed kind by its resource name; empty for
// another.
func gvrOf(resource string) schema.GroupVersionResource {
	k, _ := listedKind(resource, "")
	return k.gvr
}

// listedResourceOf is the resource of a listed kind by any of its names
// (an alias, or an alias.GROUP), "" for none.
func listedResourceOf(typ string) string {
	for _, k := range statusResources {
		for _, a := range k.aliases {
			if strings.EqualFold(typ, a) || strings.EqualFold(typ, a+"."+k.gvr.Group) {
				return k.gvr.Resource
			}
		}
	}
	return ""
}
