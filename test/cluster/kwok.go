package cluster

import "strings"

// Pods on the simulated Nodes become Running and Ready as soon as they are
// scheduled, unless they ask otherwise:
const (
	// HoldLabel on a Pod (put it on a pod template) keeps it NotReady:
	// HoldNever for every Pod, HoldRestarted only for the Pods of a
	// rollout restart (those carrying RestartedAtAnnotation), so that a
	// workload runs until it is restarted and then never becomes Ready.
	// The Pod stays Running with Ready=False, as a Pod whose readiness
	// probe fails. Fix the workload by removing the label from its pod
	// template: the next Pods become Ready.
	HoldLabel     = "kwok.kinject.dev/hold"
	HoldNever     = "never"
	HoldRestarted = "restarted"
	// ReadyAfterAnnotation delays readiness by a Go duration ("2s"), for
	// rollouts slow enough to be watched or interrupted.
	ReadyAfterAnnotation = "kwok.kinject.dev/ready-after"
	// HoldImageAnnotation names an image (put it on a pod template) that
	// never becomes Ready: a Pod whose container is changed to it in
	// place (a PATCH of the image, which a kubelet answers by restarting
	// that container) goes NotReady, the container waiting with the
	// reason ImagePullBackOff, until its image changes again. Any other
	// image change in place leaves the Pod Ready on the new image.
	HoldImageAnnotation = "kwok.kinject.dev/hold-image"
	// RestartedAtAnnotation is what kubectl rollout restart (and kubectl
	// inject restart) sets on a pod template.
	RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
	// NodeAnnotation marks the Nodes kwok manages.
	NodeAnnotation = "kwok.x-k8s.io/node"
)

// kwokStages is kwok's configuration: its own fast stages (kwok
// v0.8.0's kustomize/stage/{node,pod}/fast, standalone kwok has none by
// default) with two changes: pod-ready skips held Pods, which pod-hold
// makes Running and NotReady instead, and pod-ready waits for
// ReadyAfterAnnotation.
var kwokStages = strings.NewReplacer("HOLD_EXPR", holdExpression, "IMAGE_EXPR", imageExpression).Replace(kwokStagesTemplate)

// imageExpression says "same" for a Pod whose container statuses show
// the images of its spec, "changed" for one changed in place, and "held"
// for one changed to HoldImageAnnotation's image. Init container statuses
// count once there are some (a held Pod has none).
const imageExpression = `if ([.spec.containers[]?.image] == [.status.containerStatuses[]?.image]) and ((.status.initContainerStatuses // []) == [] or [.spec.initContainers[]?.image] == [.status.initContainerStatuses[]?.image]) then "same" elif ((.metadata.annotations["` + HoldImageAnnotation + `"] // "") as $h | [.spec.containers[]?.image, .spec.initContainers[]?.image] | any(. == $h)) then "held" else "changed" end`

// holdExpression says "hold" for a held Pod, "ready" for any other.
const holdExpression = `(.metadata.labels["` + HoldLabel + `"] // "") as $h | if $h == "` + HoldNever + `" or ($h == "` + HoldRestarted + `" and (.metadata.annotations["` + RestartedAtAnnotation + `"] != null)) then "hold" else "ready" end`

const kwokStagesTemplate = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      addresses:
      - address: {{ NodeIP | Quote }}
        type: InternalIP
      allocatable: {cpu: 1k, memory: 1Ti, pods: 1k}
      capacity: {cpu: 1k, memory: 1Ti, pods: 1k}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: {{ printf "kwok-%s" Version }}
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: [Pending]
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
    - key: 'HOLD_EXPR'
      operator: In
      values: [ready]
  delay:
    durationFrom:
      jq: {expression: '.metadata.annotations["` + ReadyAfterAnnotation + `"] // ""'}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Ready}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: ContainersReady}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state: {running: {startedAt: {{ $now | Quote }}}}
      {{ end }}
      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        {{ if eq .restartPolicy "Always" }}
        started: true
        state: {running: {startedAt: {{ $now | Quote }}}}
        {{ else }}
        state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
        {{ end }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-hold
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: [Pending]
    - key: 'HOLD_EXPR'
      operator: In
      values: [hold]
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: "False", type: Ready, reason: ContainersNotReady}
      - {lastTransitionTime: {{ $now | Quote }}, status: "False", type: ContainersReady, reason: ContainersNotReady}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state: {running: {startedAt: {{ $now | Quote }}}}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-image-changed
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: [Running]
    - key: 'IMAGE_EXPR'
      operator: In
      values: [changed, held]
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $held := "" }}{{ with .metadata.annotations }}{{ with index . "` + HoldImageAnnotation + `" }}{{ $held = . }}{{ end }}{{ end }}
      {{ $ready := "True" }}
      {{ range .spec.containers }}{{ if eq .image $held }}{{ $ready = "False" }}{{ end }}{{ end }}
      {{ range .spec.initContainers }}{{ if eq .image $held }}{{ $ready = "False" }}{{ end }}{{ end }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: {{ $ready | Quote }}, type: Ready}
      - {lastTransitionTime: {{ $now | Quote }}, status: {{ $ready | Quote }}, type: ContainersReady}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        restartCount: 0
        {{ if eq .image $held }}
        ready: false
        state: {waiting: {reason: ImagePullBackOff, message: {{ printf "Back-off pulling image %q" .image | Quote }}}}
        {{ else }}
        ready: true
        state: {running: {startedAt: {{ $now | Quote }}}}
        {{ end }}
      {{ end }}
      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        restartCount: 0
        {{ if eq .image $held }}
        ready: false
        started: false
        state: {waiting: {reason: ImagePullBackOff, message: {{ printf "Back-off pulling image %q" .image | Quote }}}}
        {{ else if eq .restartPolicy "Always" }}
        ready: true
        started: true
        state: {running: {startedAt: {{ $now | Quote }}}}
        {{ else }}
        ready: true
        state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
        {{ end }}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: [Running]
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: In
      values: ['True']
    - key: '.metadata.ownerReferences.[].kind'
      operator: In
      values: [Job]
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: Exists
  next:
    delete: true
`
