package live

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// logAgent is a second sidecar for a profile named logs: it shares nothing
// with the default Envoy sidecar.
const logAgent = `containers:
- name: log-agent
  image: fluent/fluent-bit:3.0
  volumeMounts:
  - {name: logs, mountPath: /var/log/app}
volumes:
- name: logs
  emptyDir: {}
`

// sameTemplate returns a Deployment named name whose pod template is the
// one deployment("web") has, so that pod templates compare equal.
func sameTemplate(name string) string {
	return strings.Replace(deployment("web", ""), "  name: web\n", "  name: "+name+"\n", 1)
}

// TestTwoProfiles: the default sidecar and the logs profile's on one
// Deployment, client-side and server-side. Each profile is removed on its
// own: the stored pod template then equals, field for field, that of a
// Deployment injected with the other profile only; --all-profiles gives the
// original pod template back.
func TestTwoProfiles(t *testing.T) {
	c.Require(t)
	logs := writeFile(t, "log-agent.yaml", logAgent)
	for _, mode := range []struct {
		name string
		args []string
	}{{"patch", nil}, {"server-side", []string{"--server-side"}}} {
		t.Run(mode.name, func(t *testing.T) {
			ns := namespace(t)
			orig := field(t, create(t, ns, deployments, sameTemplate("web")), "spec", "template")
			for _, name := range []string{"only-default", "only-logs"} {
				create(t, ns, deployments, sameTemplate(name))
			}
			in := func(args ...string) result {
				t.Helper()
				r := inject(t, append(append([]string{"-n", ns}, args...), mode.args...)...)
				expectCode(t, r, 0)
				return r
			}
			in("deploy/web", "deploy/only-default")
			in("deploy/web", "deploy/only-logs", "--profile", "logs", "--template", logs)
			web := get(t, ns, deployments, "web")
			if names := strings.Join(containerNames(t, web, "spec", "template", "spec"), ","); names != "envoy,app,log-agent" {
				t.Fatalf("containers after injecting both profiles: %s", names)
			}
			if r := in("deploy/web", "--profile", "logs", "--template", logs); r.writes() != 0 {
				t.Errorf("injecting a current profile again sent writes: %v", r.requests)
			}
			both := field(t, web, "spec", "template")

			r := in("deploy/web", "--uninject", "--profile", "logs")
			expectStderr(t, r, "deployment.apps/web uninjected\n")
			if got, want := field(t, get(t, ns, deployments, "web"), "spec", "template"), field(t, get(t, ns, deployments, "only-default"), "spec", "template"); got != want {
				t.Errorf("after uninjecting the logs profile:\n%s\nwant (the default profile only):\n%s", got, want)
			}

			in("deploy/web", "--profile", "logs", "--template", logs)
			if got := field(t, get(t, ns, deployments, "web"), "spec", "template"); got != both {
				t.Errorf("injecting the logs profile again:\n%s\nwant:\n%s", got, both)
			}
			in("deploy/web", "--uninject")
			if got, want := field(t, get(t, ns, deployments, "web"), "spec", "template"), field(t, get(t, ns, deployments, "only-logs"), "spec", "template"); got != want {
				t.Errorf("after uninjecting the default profile:\n%s\nwant (the logs profile only):\n%s", got, want)
			}

			r = inject(t, append([]string{"-n", ns, "deploy/only-default", "--profile", "mesh"}, mode.args...)...)
			expectCode(t, r, 1)
			expectStderr(t, r, `is added by the default profile and by profile "mesh"`)
			if r.writes() != 0 {
				t.Errorf("a conflict between profiles sent writes: %v", r.requests)
			}

			in("deploy/web")
			r = in("deploy/web", "--uninject", "--all-profiles")
			expectStderr(t, r, "deployment.apps/web uninjected\n")
			if got := field(t, get(t, ns, deployments, "web"), "spec", "template"); got != orig {
				t.Errorf("after --all-profiles:\n%s\nwant the original:\n%s", got, orig)
			}
		})
	}
}

// TestStatusProfile: status --profile reads that profile's records: a
// workload with only the default sidecar is not injected for it, one with
// an older logs template is outdated; -o wide shows the recorded override
// values, and a changed override annotation makes a row outdated. Only
// list calls are sent.
func TestStatusProfile(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	logs := writeFile(t, "log-agent.yaml", logAgent)
	oldLogs := writeFile(t, "old-log-agent.yaml", strings.Replace(logAgent, "fluent-bit:3.0", "fluent-bit:2.2", 1))
	for _, name := range []string{"both", "default-only", "old-logs"} {
		create(t, ns, deployments, sameTemplate(name))
	}
	create(t, ns, deployments, strings.Replace(withOverrides("tuned"), "sidecar.kinject.dev/", "logs.sidecar.kinject.dev/", 2))
	expectCode(t, inject(t, "-n", ns, "deploy/both", "deploy/default-only"), 0)
	expectCode(t, inject(t, "-n", ns, "deploy/both", "--profile", "logs", "--template", logs), 0)
	expectCode(t, inject(t, "-n", ns, "deploy/old-logs", "--profile", "logs", "--template", oldLogs), 0)

	rows := statusRows(t, "status", "-n", ns, "--profile", "logs", "--template", logs)
	want := []string{
		"deployment.apps/old-logs outdated logs log-agent=fluent/fluent-bit:2.2",
		"deployment.apps/default-only not-injected logs ",
		"deployment.apps/tuned not-injected logs ",
		"deployment.apps/both current logs log-agent=fluent/fluent-bit:3.0",
	}
	if got := describeRows(rows); got != strings.Join(want, "\n") {
		t.Errorf("status --profile logs:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	rows = statusRows(t, "status", "-n", ns, "deploy/both", "deploy/default-only")
	if got := describeRows(rows); got != "deployment.apps/both current  envoy=envoyproxy/envoy:v1.40.0\ndeployment.apps/default-only current  envoy=envoyproxy/envoy:v1.40.0" {
		t.Errorf("status of the default profile:\n%s", got)
	}

	// The default template declares the override parameters; with the
	// logs profile they are logs.sidecar.kinject.dev/cpu-request and
	// logs.sidecar.kinject.dev/memory-request.
	expectCode(t, inject(t, "-n", ns, "deploy/tuned", "--profile", "logs"), 0)
	wide := inject(t, "status", "-n", ns, "deploy/tuned", "--profile", "logs", "-o", "wide")
	expectCode(t, wide, 0)
	t.Logf("status -o wide:\n%s", wide.stdout)
	lines := strings.Split(strings.TrimSpace(wide.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "VALUES") || !strings.Contains(lines[1], "cpu-request=100m,memory-request=128Mi") || !strings.Contains(lines[1], " current ") {
		t.Errorf("-o wide:\n%s", wide.stdout)
	}
	annotate(t, ns, "tuned", "logs.sidecar.kinject.dev/cpu-request", "500m")
	rows = statusRows(t, "status", "-n", ns, "deploy/tuned", "--profile", "logs")
	if len(rows) != 1 || rows[0].State != fleet.Outdated || rows[0].RecordedValues["cpu-request"] != "100m" || !strings.Contains(rows[0].Message, "override annotations") {
		t.Errorf("after the annotation changed: %+v", rows)
	}
	expectCode(t, inject(t, "status", "-n", ns, "deploy/tuned", "--profile", "logs", "--check"), 1)
	expectCode(t, inject(t, "status", "-n", ns, "--profile", "NOPE"), 1)
}

// statusRows runs status -o json and returns its rows; it fails the test
// when anything but list calls was sent.
func statusRows(t *testing.T, args ...string) []fleet.Row {
	t.Helper()
	r := inject(t, append(args, "-o", "json")...)
	expectCode(t, r, 0)
	if r.writes() != 0 || r.requests[http.MethodGet] > 8 {
		t.Errorf("status sent %v; want a handful of list calls only", r.requests)
	}
	var list struct {
		Items []fleet.Row `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.stdout)
	}
	return list.Items
}

func describeRows(rows []fleet.Row) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s %s %s %s", r.Ref(), r.State, r.Profile, strings.Join(r.Images, ",")))
	}
	return strings.Join(out, "\n")
}

// annotate sets an annotation on a Deployment, as kubectl annotate does.
func annotate(t *testing.T, ns, name, key, value string) {
	t.Helper()
	obj := get(t, ns, deployments, name)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	obj.SetAnnotations(annotations)
	if _, err := client(t).Resource(deployments).Namespace(ns).Update(ctx(t), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestBarePodProfiles: a bare Pod is recreated for each profile's change,
// and each recreation keeps the other profile's sidecar.
func TestBarePodProfiles(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	logs := writeFile(t, "log-agent.yaml", logAgent)
	create(t, ns, pods, "apiVersion: v1\nkind: Pod\nmetadata: {name: solo}\nspec:\n  containers: [{name: app, image: nginx}]\n")
	steps := []struct {
		args []string
		want string
	}{
		// Init containers first: the default's native sidecar leads.
		{[]string{"--recreate"}, "envoy,app"},
		{[]string{"--recreate", "--profile", "logs", "--template", logs}, "envoy,app,log-agent"},
		{[]string{"--recreate", "--uninject"}, "app,log-agent"},
		{[]string{"--recreate"}, "envoy,app,log-agent"},
		{[]string{"--recreate", "--uninject", "--all-profiles"}, "app"},
	}
	for _, s := range steps {
		before := get(t, ns, pods, "solo")
		r := inject(t, append([]string{"pod/solo", "-n", ns}, s.args...)...)
		expectCode(t, r, 0)
		after := get(t, ns, pods, "solo")
		if after.GetUID() == before.GetUID() {
			t.Errorf("%v: the Pod was not recreated", s.args)
		}
		if got := strings.Join(containerNames(t, after, "spec"), ","); got != s.want {
			t.Errorf("%v: containers %s, want %s", s.args, got, s.want)
		}
	}
	if a := get(t, ns, pods, "solo").GetAnnotations(); len(a) != 0 {
		t.Errorf("annotations left after --all-profiles: %v", a)
	}
}

// TestCompleteProfile: --profile completes with the named profiles whose
// records the namespace's workloads carry.
func TestCompleteProfile(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, sameTemplate("web"))
	expectCode(t, inject(t, "-n", ns, "deploy/web"), 0)
	expectCode(t, inject(t, "-n", ns, "deploy/web", "--profile", "logs", "--template", writeFile(t, "log-agent.yaml", logAgent)), 0)
	for _, args := range [][]string{{"__complete", "deploy/web", "-n", ns, "--profile", ""}, {"__complete", "status", "-n", ns, "--profile", "l"}} {
		r := inject(t, args...)
		if r.stdout != "logs\n:4\n" {
			t.Errorf("%v: %q, want the logs profile only", args, r.stdout)
		}
	}
}
