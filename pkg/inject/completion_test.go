package inject_test

import (
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestClassicSidecarRefusedForCompletion: a classic sidecar is refused for
// every Pod that runs to completion, with the message written out here;
// the native default goes into the same Pods, and a classic sidecar into
// Pods that run until stopped.
func TestClassicSidecarRefusedForCompletion(t *testing.T) {
	t.Parallel()
	classic, native := false, true
	const tail = `: the pod runs to completion, and classic sidecar "envoy" would keep it running after the app exits (inject a native sidecar: --native, or native: true)`
	cases := []struct {
		name, doc string
		native    *bool
		want      inject.Action
		field     string
		message   string
	}{
		{"job", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: app, image: a}]\n",
			&classic, inject.Failed, "spec.template.spec.restartPolicy", `spec.template.spec.restartPolicy: "Never"` + tail},
		{"cronjob", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '@daily'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers: [{name: app, image: a}]\n",
			&classic, inject.Failed, "spec.jobTemplate.spec.template.spec.restartPolicy", `spec.jobTemplate.spec.template.spec.restartPolicy: "OnFailure"` + tail},
		{"job without a restartPolicy", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: app, image: a}]\n",
			&classic, inject.Failed, "kind", `kind: "Job"` + tail},
		{"pod that runs once", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Never\n  containers: [{name: app, image: a}]\n",
			&classic, inject.Failed, "spec.restartPolicy", `spec.restartPolicy: "Never"` + tail},
		{"pod that always restarts", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Always\n  containers: [{name: app, image: a}]\n",
			&classic, inject.Injected, "", ""},
		{"deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: [{name: app, image: a}]\n",
			&classic, inject.Injected, "", ""},
		{"job, native setting", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: app, image: a}]\n",
			&native, inject.Injected, "", ""},
		{"job, the default", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: app, image: a}]\n",
			nil, inject.Injected, "", ""},
		{"opted out first", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, annotations: {sidecar.kinject.dev/inject: \"false\"}}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: app, image: a}]\n",
			&classic, inject.Skipped, "", `sidecar.kinject.dev/inject is "false"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Native: c.native})
			if err != nil {
				t.Fatal(err)
			}
			out, entries := in.ProcessText(inject.OpInject, []byte(c.doc), 0)
			if len(entries) != 1 {
				t.Fatalf("%d entries", len(entries))
			}
			e := entries[0]
			if e.Action != c.want || e.Message != c.message || e.Field != c.field {
				t.Errorf("got %s %q (field %q)\nwant %s %q (field %q)", e.Action, e.Message, e.Field, c.want, c.message, c.field)
			}
			if c.want == inject.Failed {
				if e.Reason != inject.ReasonRunsToCompletion {
					t.Errorf("reason %s, want %s", e.Reason, inject.ReasonRunsToCompletion)
				}
				if string(out) != c.doc {
					t.Errorf("a refused object changed:\n%s", out)
				}
			}
		})
	}
}
