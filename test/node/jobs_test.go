package node_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// workJob is a Job whose app does its work for two seconds and exits 0.
func workJob() string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: work
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: app
        image: %s
        args: ["-exit-after", "2s"]
        ports:
        - containerPort: 8080
`, node.AppImage)
}

// tickCronJob is a CronJob that never fires on its own before the tests
// end (kubectl create job --from runs it).
func tickCronJob() string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: app
            image: %s
            args: ["-exit-after", "2s"]
            ports:
            - containerPort: 8080
`, node.AppImage)
}

// TestJobs runs a Job and a CronJob's Job with the sidecar each way, and
// each completes: the native sidecar lets the Pod finish when the app
// does. Live injection refuses a Job (its pod template is immutable):
// there, the CronJob is injected and its Job runs.
func TestJobs(t *testing.T) {
	n.Require(t)
	eachWay(t, nil, func(t *testing.T, w way, ns string) {
		manifest := tickCronJob()
		if w.name != "live" {
			manifest = workJob() + "---\n" + manifest
		}
		mustSucceed(t, w.deploy(t, ns, manifest), "inject")
		kubectl(t, "", "create", "job", "-n", ns, "tick-now", "--from=cronjob/tick")
		jobs := []string{"tick-now"}
		if w.name != "live" {
			jobs = append(jobs, "work")
		}
		for _, job := range jobs {
			pod := jobPod(t, ns, job)
			if _, native := sidecar(pod); !native {
				t.Errorf("job %s: the Pod has no native sidecar: %s", job, describe(pod))
			}
			waitComplete(t, ns, job)
		}
	})
}

// TestJobsClassicSidecar asks each way for a classic sidecar
// (--native=false) in a Pod that runs to completion, which would never
// complete: --local and live injection refuse it, naming the object and
// the fix; admission leaves the Pod plain, and its Job completes.
func TestJobsClassicSidecar(t *testing.T) {
	n.Require(t)
	eachWay(t, nil, func(t *testing.T, w way, ns string) {
		manifest := tickCronJob()
		if w.name == "local" || w.name == "admission" {
			manifest = workJob()
		}
		r := w.deploy(t, ns, manifest, "--native=false")
		switch w.name {
		case "local", "live":
			object := map[string]string{"local": "work", "live": "tick"}[w.name]
			if r.code == 0 {
				t.Fatalf("a classic sidecar was injected into a Pod that runs to completion:\n%s", r.stdout)
			}
			if !strings.Contains(r.stderr, object) || !strings.Contains(r.stderr, "--native") {
				t.Errorf("the refusal names neither %s nor the fix --native:\n%s", object, r.stderr)
			}
			if w.name == "live" {
				cj, err := admin(t).BatchV1().CronJobs(ns).Get(context.Background(), "tick", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(cj.Spec.JobTemplate.Spec.Template.Spec.Containers) != 1 || len(cj.Spec.JobTemplate.Spec.Template.Spec.InitContainers) != 0 {
					t.Errorf("the refused CronJob was changed: %+v", cj.Spec.JobTemplate.Spec.Template.Spec)
				}
			}
		case "admission":
			pod := jobPod(t, ns, "work")
			if c, _ := sidecar(pod); c != nil {
				// Its Job would never complete: no use waiting.
				t.Fatalf("admission put a classic sidecar into a Job's Pod: %s", describe(pod))
			}
			// The skip is said on the Pod, under the profile's prefix.
			skipped := pod.Annotations[classicProfile+".sidecar.kinject.dev/skipped"]
			if !strings.HasPrefix(skipped, "runs_to_completion") {
				t.Errorf("the Pod left plain does not say why (runs_to_completion): annotations %v", pod.Annotations)
			}
			waitComplete(t, ns, "work")
		}
	})
}

// jobPod waits for the first Pod of job and returns it.
func jobPod(t *testing.T, ns, job string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	eventually(t, time.Minute, "a Pod of job "+job, func() bool {
		l, err := admin(t).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "job-name=" + job})
		if err != nil || len(l.Items) == 0 {
			return false
		}
		pod = l.Items[0]
		return true
	})
	return pod
}

// waitComplete waits until job has succeeded once and is Complete.
func waitComplete(t *testing.T, ns, job string) {
	t.Helper()
	var got *batchv1.Job
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var err error
		got, err = admin(t).BatchV1().Jobs(ns).Get(context.Background(), job, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue && got.Status.Succeeded == 1 {
				return
			}
			if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
				t.Fatalf("job %s failed: %s", job, cond.Message)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not Complete after 2 minutes: %+v", job, got.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
