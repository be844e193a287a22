package node_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/test/node"
)

// way is one of the three ways a sidecar gets into a workload.
type way struct {
	name string
	// deploy creates the objects of manifest in ns with the sidecar added
	// this way, flags added to the injection's. It returns kubectl
	// inject's run (none at admission, where the API server injects);
	// when that fails, nothing is created.
	deploy func(t *testing.T, ns, manifest string, flags ...string) command
}

// classicProfile is the admission profile of a classic sidecar
// (--native=false), beside the default, native one.
const classicProfile = "classic"

var ways = []way{
	{"local", func(t *testing.T, ns, manifest string, flags ...string) command {
		// kubectl-inject --local -f manifest | kubectl apply -f -
		r := injectLocal(t, manifest, append([]string{"--image", node.ProxyImage}, flags...)...)
		if r.code == 0 {
			kubectl(t, r.stdout, "apply", "-n", ns, "-f", "-")
		}
		return r
	}},
	{"live", func(t *testing.T, ns, manifest string, flags ...string) command {
		// kubectl apply, then kubectl inject TYPE/NAME: a PATCH.
		names := strings.Fields(kubectl(t, manifest, "apply", "-n", ns, "-f", "-", "-o", "name"))
		return inject(t, append(append([]string{"-n", ns}, names...), append([]string{"--image", node.ProxyImage}, flags...)...)...)
	}},
	{"admission", func(t *testing.T, ns, manifest string, flags ...string) command {
		// The policy installed, the namespace enabled, then kubectl apply.
		profile := ""
		if slices.Contains(flags, "--native=false") {
			profile = classicProfile
		}
		enableAdmission(t, ns, profile, flags...)
		kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
		return command{}
	}},
}

// eachWay runs test for every way, in parallel, each in a namespace of
// its own (labels added).
func eachWay(t *testing.T, labels map[string]string, test func(t *testing.T, w way, ns string)) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			test(t, w, namespace(t, labels))
		})
	}
}
