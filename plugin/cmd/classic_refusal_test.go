package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// completingFile holds Pods that run to completion: a Job, a CronJob and a
// bare Pod because of their restartPolicy, and a Job whose template names
// none (its kind is what says so). Each comment marks the value a refusal
// must point at.
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
---
apiVersion: batch/v1
kind: Job # KIND
metadata:
  name: nopolicy
spec:
  template:
    spec:
      containers:
      - name: app
        image: busybox
`

// completionRefusal is what the refusal of one object of completingFile
// must say: the object, the field, its value and the document (from 1).
type completionRefusal struct {
	marker, object, field, value string
	document                     int
}

var completionRefusals = []completionRefusal{
	{"JOB", "job.batch/once", "spec.template.spec.restartPolicy", "Never", 1},
	{"CRONJOB", "cronjob.batch/nightly", "spec.jobTemplate.spec.template.spec.restartPolicy", "OnFailure", 2},
	{"POD", "pod/task", "spec.restartPolicy", "Never", 3},
	{"KIND", "job.batch/nopolicy", "kind", "Job", 4},
}

// markedValue returns the line and column (both from 1) of the value on
// the line of text that carries "# marker": where the YAML parser puts the
// value's node.
func markedValue(t *testing.T, text, marker string) (line, column int) {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, " # "+marker) {
			return i + 1, strings.Index(l, ": ") + 3
		}
	}
	t.Fatalf("no line marked %s", marker)
	return 0, 0
}

// TestClassicRefusedForCompletion: --local refuses a classic sidecar for
// every Pod of completingFile, however the template asks for the classic
// form, each at the file's line and column of the value that makes the Pod
// run to completion, with the reason runs_to_completion, the field and
// the sidecar named; and writes nothing: the output is the input, and
// --in-place leaves the file as it was.
func TestClassicRefusedForCompletion(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no cluster needed
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "proxy.yaml"), "containers:\n- name: proxy\n  image: envoyproxy/envoy:v1.40.0\n")
	writeFile(t, filepath.Join(dir, "classic.yaml"), "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec:\n  native: false\n")
	ways := []struct {
		name, sidecar string
		flags         []string
	}{
		{"the flag --native=false", "envoy", []string{"--native=false"}},
		{"native: false in a SidecarInjection", "envoy", []string{"--template", filepath.Join(dir, "classic.yaml")}},
		{"a template whose sidecar is a container", "proxy", []string{"--template", filepath.Join(dir, "proxy.yaml")}},
	}
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			app := filepath.Join(t.TempDir(), "app.yaml")
			writeFile(t, app, completingFile)
			var want strings.Builder
			for _, r := range completionRefusals {
				line, column := markedValue(t, completingFile, r.marker)
				fmt.Fprintf(&want, "%s:%d:%d: %s error: runs_to_completion: %s: %q: the pod runs to completion, and classic sidecar %q would keep it running after the app exits (inject a native sidecar: --native, or native: true) (document %d)\n",
					app, line, column, r.object, r.field, r.value, way.sidecar, r.document)
			}
			n := len(completionRefusals)

			stdout, stderr, code := runCmd(t, "", append([]string{"--local", "-f", app}, way.flags...)...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if summary := fmt.Sprintf("error: %d of %d objects failed; the output holds them as they were in the input\n", n, n); stderr != want.String()+summary {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want.String()+summary)
			}
			if stdout != completingFile {
				t.Errorf("the output is not the input:\n%s", stdout)
			}

			_, stderr, code = runCmd(t, "", append([]string{"--local", "-f", app, "--in-place"}, way.flags...)...)
			if code != 1 {
				t.Errorf("--in-place: exit %d, want 1", code)
			}
			if summary := fmt.Sprintf("error: %d of %d objects failed, so no file was changed", n, n); !strings.HasPrefix(stderr, want.String()+summary) {
				t.Errorf("--in-place: stderr:\n%s\nwant:\n%s", stderr, want.String()+summary+" ...")
			}
			if got, err := os.ReadFile(app); err != nil || string(got) != completingFile {
				t.Errorf("--in-place changed the file (%v):\n%s", err, got)
			}
		})
	}
}
