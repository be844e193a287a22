package rollout

import (
	"fmt"
	"sort"
	"strings"
)

// deployment is a Deployment whose pod template has the labels app=NAME
// and extra (key=value pairs, "" for none) and the annotations.
func deployment(name string, replicas int, extra, annotations map[string]string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  replicas: %[2]d
  progressDeadlineSeconds: 30
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s%[3]s}, annotations: {%[4]s}}
    spec:
      containers: [{name: app, image: nginx:1.27, ports: [{containerPort: 8080}]}]
`, name, replicas, flow(extra, ", "), flow(annotations, ""))
}

func statefulSet(name string, replicas int, strategy string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  replicas: %[2]d
  serviceName: %[1]s
  updateStrategy: {type: %[3]s}
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: db, image: postgres:17}]
`, name, replicas, strategy)
}

func daemonSet(name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: agent, image: fluent/fluent-bit:3.2}]
`, name)
}

func replicaSet(name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: app, image: nginx:1.27}]
`, name, replicas)
}

func job(name string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      restartPolicy: Never
      containers: [{name: job, image: busybox:1.36}]
`, name)
}

func cronJob(name string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: CronJob
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  schedule: "0 3 * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: busybox:1.36}]
`, name)
}

func barePod(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  containers: [{name: app, image: nginx:1.27}]
`, name)
}

// flow writes m as the inside of a YAML flow map, after lead when not empty.
func flow(m map[string]string, lead string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%q: %q", k, m[k])
	}
	if len(keys) == 0 {
		return ""
	}
	return lead + strings.Join(keys, ", ")
}
