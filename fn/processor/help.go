package processor

// Help is the text of inject-fn --help (and of kpt fn doc).
const Help = `inject-fn: add a sidecar (Envoy by default) to the pod templates of
Kubernetes resources, as a KRM function or on YAML files.

USAGE
  inject-fn                              KRM function: ResourceList on stdin and stdout
  inject-fn [--uninject] CONFIG.yaml [INPUT.yaml|-]...
                                         edit plain YAML files; output on stdout,
                                         one line per workload on stderr
  inject-fn --copy-to DIR                copy this binary into DIR as inject-fn: how an init
                                         container of the image (no shell) puts the function
                                         on a volume for Argo CD's repo-server
  inject-fn --help | --version

TARGETS
  Pod, PodTemplate, Deployment, ReplicaSet, ReplicationController, StatefulSet,
  DaemonSet, Job, CronJob, and kinds named in podTemplatePaths. Everything else
  passes through unchanged. Each injected pod template gets the annotation
  sidecar.kinject.dev/status, so running again changes nothing and uninject
  restores the object exactly.

FUNCTION CONFIG (one of)
  none                  the embedded Envoy sidecar, opt-out mode
  SidecarInjection      apiVersion: kinject.dev/v1alpha1
                        kind: SidecarInjection
                        metadata: {name: envoy}
                        spec:
                          mode: opt-in            # or opt-out (default)
                          native: true            # sidecars as initContainers, restartPolicy: Always
                          template:               # a partial Pod spec ...
                            containers: [...]
                            volumes: [...]
                          # templateRef: {name: envoy-initializer, namespace: ns, key: config}
                          #   ... or a ConfigMap among the input resources (kept in the output)
  ConfigMap             flat settings, as kpt fn eval -- key=value makes them:
                        data: {mode: opt-in, image: envoyproxy/envoy:v1.31.2}
  seed ConfigMap        the Initializer's envoy-initializer ConfigMap: a partial
                        Pod spec under data.config (other data keys are settings)

SETTINGS (SidecarInjection spec fields or ConfigMap data keys)
  mode                  opt-out: inject everything unless sidecar.kinject.dev/inject: "false"
                        opt-in: only objects annotated sidecar.kinject.dev/inject: "true"
                        or initializer.kubernetes.io/envoy: "true"
  native                true/false: move the sidecars to native (initContainers) or classic form
  image                 override the image of the first sidecar
  kinds, apiGroups, namespaces   comma-separated lists that limit the targets
  selector              a label selector on the objects' labels
  injectHostNetwork     also inject pods with hostNetwork: true
  podTemplatePaths      Kind[.group]=path for other kinds, e.g. Rollout.argoproj.io=spec.template
  template-configmap    [NAMESPACE/]NAME[:KEY]: take the template from a ConfigMap
                        among the input resources (default key: config)
  uninject              true: remove earlier injections instead
  admissionPolicy       true: leave the workloads as they are and add the admission
                        policy (MutatingAdmissionPolicy kinject-NAME, NAME the
                        SidecarInjection's, and its binding; a ValidatingAdmissionPolicy
                        that warns of conflicts): the API server injects new Pods

RESULTS
  One info result per workload (injected, updated, unchanged, skipped with a
  reason such as not_opted_in, opted_out, host_network), an error result per
  object that cannot be injected (conflict, invalid_object, ...) and for a bad
  config (naming the field). The function exits 1 when there is an error
  result, after writing the whole ResourceList.

EXAMPLES
  kpt fn eval --exec inject-fn ./app -- mode=opt-in native=true
  kpt fn eval --image kinject/inject-fn:dev --image-pull-policy never ./app
  kpt fn eval --exec inject-fn ./app -- template-configmap=envoy-initializer
  kpt fn eval --exec inject-fn ./app -- uninject=true
  kpt fn eval --exec inject-fn ./app -- admissionPolicy=true namespaces=shop

  kustomize build --enable-alpha-plugins --enable-exec ./overlay
    with a transformer such as
      apiVersion: kinject.dev/v1alpha1
      kind: SidecarInjection
      metadata:
        name: envoy
        annotations:
          config.kubernetes.io/function: |
            exec: {path: inject-fn}          # or container: {image: kinject/inject-fn:dev}
      spec: {mode: opt-out}

  inject-fn config.yaml app.yaml > injected.yaml
  inject-fn --uninject config.yaml injected.yaml > app.yaml
`
