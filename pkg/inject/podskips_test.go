package inject_test

import (
	"slices"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestPodSkipsAreTheSkipRows holds the pod-level skips (the conditions the
// core and the admission policy both evaluate) to the table of reasons:
// every skip row that admission marks or leaves unmarked has one pod
// skip under some policy, and every pod skip has such a row, a match
// condition's name of its own, and a message.
func TestPodSkipsAreTheSkipRows(t *testing.T) {
	t.Parallel()
	given := map[inject.Reason]string{} // reason: its condition's name
	for _, p := range []inject.Policy{{}, {Mode: inject.OptIn}, {InjectHostNetwork: true}} {
		for _, profile := range []string{"", "mesh"} {
			names := map[string]bool{}
			for _, s := range p.PodSkips(profile) {
				if names[s.Name] {
					t.Errorf("%+v, profile %q: two skips named %s", p, profile, s.Name)
				}
				names[s.Name] = true
				if s.Name == "" || s.When == nil || s.Message("x") == "" {
					t.Errorf("%s: a skip without its name, condition or message", s.Reason)
				}
				if was, ok := given[s.Reason]; ok && was != s.Name {
					t.Errorf("%s: named %s and %s", s.Reason, was, s.Name)
				}
				given[s.Reason] = s.Name
			}
		}
	}
	for _, r := range inject.ReasonRules() {
		podLevel := slices.Contains(r.Outcomes, inject.Skipped) && (r.AtAdmission == inject.AdmissionMarked || r.AtAdmission == inject.AdmissionUnmarked)
		if _, ok := given[r.Reason]; ok != podLevel {
			t.Errorf("%s: a pod skip %v, a pod-level skip row %v", r.Reason, ok, podLevel)
		}
	}
	for _, want := range []inject.Reason{inject.ReasonOptedOut, inject.ReasonNotOptedIn, inject.ReasonHostNetwork, inject.ReasonOtherMesh, inject.ReasonMirrorPod} {
		if _, ok := given[want]; !ok {
			t.Errorf("%s: no pod skip", want)
		}
	}
}

// TestPodSkipsFollowThePolicy: opt-in adds its skip, injectHostNetwork
// drops the host network's, and the seed's annotation opts in the default
// profile only.
func TestPodSkipsFollowThePolicy(t *testing.T) {
	t.Parallel()
	reasons := func(p inject.Policy, profile string) []inject.Reason {
		var out []inject.Reason
		for _, s := range p.PodSkips(profile) {
			out = append(out, s.Reason)
		}
		return out
	}
	// The skips of the default policy, and the same with opt-in (its skip
	// right after opted_out) and with injectHostNetwork (without
	// host_network): the other skips are the same under every policy.
	all := reasons(inject.Policy{}, "")
	if len(all) < 2 || all[0] != inject.ReasonOptedOut || !slices.Contains(all, inject.ReasonHostNetwork) || slices.Contains(all, inject.ReasonNotOptedIn) {
		t.Fatalf("the default policy's skips: %v", all)
	}
	optIn := slices.Insert(slices.Clone(all), 1, inject.ReasonNotOptedIn)
	hostNetwork := slices.DeleteFunc(slices.Clone(all), func(r inject.Reason) bool { return r == inject.ReasonHostNetwork })
	for _, c := range []struct {
		policy  inject.Policy
		profile string
		want    []inject.Reason
	}{
		{inject.Policy{}, "mesh", all},
		{inject.Policy{Mode: inject.OptIn}, "", optIn},
		{inject.Policy{Mode: inject.OptIn}, "mesh", optIn},
		{inject.Policy{InjectHostNetwork: true}, "mesh", hostNetwork},
	} {
		if got := reasons(c.policy, c.profile); !slices.Equal(got, c.want) {
			t.Errorf("%+v, profile %q: %v, want %v", c.policy, c.profile, got, c.want)
		}
	}
	optInWhen := func(profile string) inject.PodCondition {
		return inject.Policy{Mode: inject.OptIn}.PodSkips(profile)[1].When
	}
	seed := inject.AnnotationIs{Key: "initializer.kubernetes.io/envoy", Value: "true"}
	if got, want := optInWhen(""), (inject.Not{Of: inject.AnyOf{inject.AnnotationIs{Key: "sidecar.kinject.dev/inject", Value: "true"}, seed}}); !equalCondition(got, want) {
		t.Errorf("default profile's opt-in: %#v, want %#v", got, want)
	}
	if got, want := optInWhen("mesh"), (inject.Not{Of: inject.AnyOf{inject.AnnotationIs{Key: "mesh.sidecar.kinject.dev/inject", Value: "true"}}}); !equalCondition(got, want) {
		t.Errorf("profile mesh's opt-in: %#v, want %#v", got, want)
	}
}

func equalCondition(a, b inject.PodCondition) bool {
	na, okA := a.(inject.Not)
	nb, okB := b.(inject.Not)
	if okA && okB {
		return slices.EqualFunc(na.Of.(inject.AnyOf), nb.Of.(inject.AnyOf), func(x, y inject.PodCondition) bool { return x == y })
	}
	return false
}
