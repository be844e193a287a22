package cmd

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Every name of a listed kind resolves to it, with or without its group,
// in any case; no name belongs to two kinds; kind and resource map both
// ways; the kinds the commands derive from the table are the ones they
// list.
func TestWorkloadKinds(t *testing.T) {
	owner := map[string]string{}
	for _, k := range workloadKinds {
		for _, a := range k.aliases {
			if o, dup := owner[a]; dup {
				t.Errorf("alias %q of both %s and %s", a, o, k.kind)
			}
			owner[a] = k.kind
			want := ""
			if k.listed {
				want = k.gvr.Resource
			}
			for _, typ := range []string{a, a + "." + k.gvr.Group, strings.ToUpper(a)} {
				if got := listedResourceOf(typ); got != want {
					t.Errorf("listedResourceOf(%q) = %q, want %q", typ, got, want)
				}
			}
		}
		if _, ok := inject.BuiltinPodTemplatePath(k.gvr.Group, k.kind); !ok {
			t.Errorf("%s: the core injects no such kind (pkg/inject's builtinPaths), so its pod template is not known", k.kind)
		}
		if k.listed {
			if kindOf(k.gvr.Resource) != k.kind || resourceOf(k.kind) != k.gvr.Resource || gvrOf(k.gvr.Resource) != k.gvr {
				t.Errorf("%s: kindOf %q, resourceOf %q, gvrOf %v", k.kind, kindOf(k.gvr.Resource), resourceOf(k.kind), gvrOf(k.gvr.Resource))
			}
		} else if resourceOf(k.kind) != "" || !gvrOf(k.gvr.Resource).Empty() {
			t.Errorf("%s is not listed, but resourceOf gives %q", k.kind, resourceOf(k.kind))
		}
	}
	if got, want := resourceNames(statusResources), []string{"deployments", "statefulsets", "daemonsets", "replicasets", "cronjobs", "jobs", "pods"}; !reflect.DeepEqual(got, want) {
		t.Errorf("listed %v, want %v (status's order)", got, want)
	}
	if got, want := resourceNames(kindsWhere(func(k workloadKind) bool { return k.records })), []string{"deployments", "statefulsets", "daemonsets", "cronjobs"}; !reflect.DeepEqual(got, want) {
		t.Errorf("kinds with records %v, want %v", got, want)
	}
	if got := podTemplates["CronJob"]; !reflect.DeepEqual(got, []string{"spec", "jobTemplate", "spec", "template"}) {
		t.Errorf("a CronJob's pod template at %v", got)
	}
	if got, ok := podTemplates["Pod"]; !ok || got != nil {
		t.Errorf("a Pod's pod template: %v, %v; want nil (the Pod itself)", got, ok)
	}
	var status []string
	for _, p := range permissions {
		if p.command == "status" {
			status = append(status, p.group+":"+strings.Join(p.resources, ","))
		}
	}
	if want := []string{"apps:deployments,statefulsets,daemonsets,replicasets", "batch:cronjobs,jobs", ":pods"}; !reflect.DeepEqual(status, want) {
		t.Errorf("status's permissions %v, want %v", status, want)
	}
}
