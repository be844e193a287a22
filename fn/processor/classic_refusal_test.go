package processor

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// completingItems are Pods that run to completion, as kustomize and kpt
// hand them over (each with the file and the index it came from): a Job,
// a CronJob and a bare Pod because of their restartPolicy, and a Job whose
// template names none (its kind is what says so). Each comment marks the
// value a refusal must point at. The function config follows them.
const completingItems = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: once
    annotations:
      config.kubernetes.io/path: app.yaml
      config.kubernetes.io/index: '0'
  spec:
    template:
      spec:
        restartPolicy: Never # JOB
        containers:
        - name: app
          image: busybox
- apiVersion: batch/v1
  kind: CronJob
  metadata:
    name: nightly
    annotations:
      config.kubernetes.io/path: app.yaml
      config.kubernetes.io/index: '1'
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
- apiVersion: v1
  kind: Pod
  metadata:
    name: task
    annotations:
      config.kubernetes.io/path: app.yaml
      config.kubernetes.io/index: '2'
  spec:
    restartPolicy: Never # POD
    containers:
    - name: app
      image: busybox
- apiVersion: batch/v1
  kind: Job # KIND
  metadata:
    name: nopolicy
    annotations:
      config.kubernetes.io/path: app.yaml
      config.kubernetes.io/index: '3'
  spec:
    template:
      spec:
        containers:
        - name: app
          image: busybox
functionConfig:
  apiVersion: kinject.dev/v1alpha1
  kind: SidecarInjection
  metadata: {name: envoy}
  spec:
`

// completionRefusal is the result the function must give one item of
// completingItems.
type completionRefusal struct {
	marker, apiVersion, kind, name, field, value string
	index                                        int
}

var completionRefusals = []completionRefusal{
	{"JOB", "batch/v1", "Job", "once", "spec.template.spec.restartPolicy", "Never", 0},
	{"CRONJOB", "batch/v1", "CronJob", "nightly", "spec.jobTemplate.spec.template.spec.restartPolicy", "OnFailure", 1},
	{"POD", "v1", "Pod", "task", "spec.restartPolicy", "Never", 2},
	{"KIND", "batch/v1", "Job", "nopolicy", "kind", "Job", 3},
}

// classicConfigs are function config specs that ask for a classic sidecar,
// and the sidecar each names.
var classicConfigs = []struct{ name, spec, sidecar string }{
	{"native: false", "    native: false\n", "envoy"},
	{"a template whose sidecar is a container", "    template:\n      containers:\n      - name: proxy\n        image: envoyproxy/envoy:v1.40.0\n", "proxy"},
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

// refusalMessage words the refusal of a classic sidecar for the field's
// value, as every front end says it.
func refusalMessage(field, value, sidecar string) string {
	return fmt.Sprintf("%s: %q: the pod runs to completion, and classic sidecar %q would keep it running after the app exits (inject a native sidecar: --native, or native: true)", field, value, sidecar)
}

// TestClassicRefusedForCompletion: the function refuses a classic sidecar
// for every item of completingItems, with one error result each that
// names the reason, the object, the field (field.path), the file the item
// came from (file.path and file.index) and the field's line and column in
// the ResourceList; it exits 1 and hands the items back as they came.
func TestClassicRefusedForCompletion(t *testing.T) {
	t.Parallel()
	for _, cfg := range classicConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			t.Parallel()
			input := completingItems + cfg.spec
			var want []Result
			for _, r := range completionRefusals {
				line, column := markedValue(t, input, r.marker)
				want = append(want, Result{
					Message:     fmt.Sprintf("runs_to_completion: %s (line %d, column %d of the ResourceList)", refusalMessage(r.field, r.value, cfg.sidecar), line, column),
					Severity:    SeverityError,
					ResourceRef: &ResourceRef{APIVersion: r.apiVersion, Kind: r.kind, Name: r.name},
					Field:       &Field{Path: r.field},
					File:        &File{Path: "app.yaml", Index: r.index},
				})
			}
			var stdout, stderr bytes.Buffer
			if code := Main(nil, strings.NewReader(input), &stdout, &stderr); code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, stderr.String())
			}
			items, results, ok := strings.Cut(stdout.String(), "results:\n")
			if !ok {
				t.Fatalf("no results:\n%s", stdout.String())
			}
			if items != input {
				t.Errorf("the items changed:\n%s", items)
			}
			var got struct {
				Results []Result `yaml:"results"`
			}
			if err := yaml.Unmarshal([]byte("results:\n"+results), &got); err != nil {
				t.Fatalf("decode the results: %v\n%s", err, results)
			}
			if !reflect.DeepEqual(got.Results, want) {
				t.Errorf("results:\n%s\nwant:\n%s", results, mustMarshal(t, want))
			}
		})
	}
}

// TestClassicRefusedForCompletionFiles: in file mode the function refuses
// the same objects of a plain file, each at the file's line and column of
// the value, and writes them out as they were.
func TestClassicRefusedForCompletionFiles(t *testing.T) {
	t.Parallel()
	const file = `# Pods that run to completion
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never # JOB
      containers: [{name: app, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure # CRONJOB
          containers: [{name: app, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: task}
spec:
  restartPolicy: Never # POD
  containers: [{name: app, image: busybox}]
---
apiVersion: batch/v1
kind: Job # KIND
metadata: {name: nopolicy}
spec:
  template:
    spec:
      containers: [{name: app, image: busybox}]
`
	objects := map[string]string{"JOB": "job.batch/once", "CRONJOB": "cronjob.batch/nightly", "POD": "pod/task", "KIND": "job.batch/nopolicy"}
	dir := t.TempDir()
	config, app := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "app.yaml")
	classic := "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec:\n  native: false\n"
	for path, text := range map[string]string{config: classic, app: file} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want strings.Builder
	for _, r := range completionRefusals {
		line, column := markedValue(t, file, r.marker)
		fmt.Fprintf(&want, "%s:%d:%d: %s error: runs_to_completion: %s (document %d)\n", app, line, column, objects[r.marker], refusalMessage(r.field, r.value, "envoy"), r.index+1)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{config, app}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if stderr.String() != want.String() {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want.String())
	}
	if stdout.String() != file {
		t.Errorf("the output is not the input:\n%s", stdout.String())
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
