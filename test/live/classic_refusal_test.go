package live

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// completingFile holds Pods that run to completion because of their
// restartPolicy: a Job, a CronJob and a bare Pod. Each comment marks the
// value a refusal must point at. (A Job's template without a
// restartPolicy, refused for its kind in --local, is one the API server
// does not accept.)
const completingFile = `# Pods that run to completion
apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  template:
    spec:
      restartPolicy: Never # JOB
      containers:
      - name: app
        image: busybox
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure # CRONJOB
          containers:
          - name: app
            image: busybox
---
apiVersion: v1
kind: Pod
metadata:
  name: task
spec:
  restartPolicy: Never # POD
  containers:
  - name: app
    image: busybox
`

// markedValue returns "line:column:" of the value on the line of text that
// carries "# marker": where the YAML parser puts the value's node.
func markedValue(t *testing.T, text, marker string) string {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, " # "+marker) {
			return fmt.Sprintf("%d:%d:", i+1, strings.Index(l, ": ")+3)
		}
	}
	t.Fatalf("no line marked %s", marker)
	return ""
}

// TestClassicRefusedForCompletion: live, with --native=false, a Job, a
// CronJob and a bare Pod that run to completion are refused with the
// reason runs_to_completion and the field that says so, named by the file
// (at the value's line and column in it) or by name; nothing is sent and
// every object stays as it was on the server.
func TestClassicRefusedForCompletion(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	objects := []struct {
		marker, name, ref, field, value string
		gvr                             schema.GroupVersionResource
	}{
		{"JOB", "once", "job.batch/once", "spec.template.spec.restartPolicy", "Never", jobs},
		{"CRONJOB", "nightly", "cronjob.batch/nightly", "spec.jobTemplate.spec.template.spec.restartPolicy", "OnFailure", cronjobs},
		{"POD", "task", "pod/task", "spec.restartPolicy", "Never", pods},
	}
	versions := map[string]string{}
	for i, doc := range strings.Split(completingFile, "---\n") {
		o := objects[i]
		versions[o.ref] = create(t, ns, o.gvr, doc).GetResourceVersion()
	}
	// refusal is the line of one object, after where it is.
	refusal := func(ref, field, value string) string {
		return fmt.Sprintf("%s error: runs_to_completion: %s: %q: the pod runs to completion, and classic sidecar \"envoy\" would keep it running after the app exits (inject a native sidecar: --native, or native: true)\n", ref, field, value)
	}
	file := writeFile(t, "app.yaml", completingFile)
	var byFile, byName strings.Builder
	names := []string{"--native=false", "-n", ns}
	for _, o := range objects {
		byFile.WriteString(file + ":" + markedValue(t, completingFile, o.marker) + " " + refusal(o.ref, o.field, o.value))
		byName.WriteString(refusal(o.ref, o.field, o.value))
		names = append(names, o.ref)
	}
	summary := fmt.Sprintf("error: %d of %d objects failed\n", len(objects), len(objects))
	for _, run := range []struct {
		name string
		args []string
		want string
	}{
		{"named by the file", []string{"-f", file, "-n", ns, "--native=false"}, byFile.String()},
		{"named on the command line", names, byName.String()},
	} {
		t.Run(run.name, func(t *testing.T) {
			r := inject(t, run.args...)
			expectCode(t, r, 1)
			if r.stderr != run.want+summary {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, run.want+summary)
			}
			if r.writes() != 0 {
				t.Errorf("%d writes sent (%v), want none", r.writes(), r.requests)
			}
			for _, o := range objects {
				if got := get(t, ns, o.gvr, o.name).GetResourceVersion(); got != versions[o.ref] {
					t.Errorf("%s changed on the server: resourceVersion %s, was %s", o.ref, got, versions[o.ref])
				}
			}
		})
	}
}
