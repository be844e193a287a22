package processor

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Help returns the text of inject-fn --help (and of kpt fn doc): the
// usage, then the embedded default template, as it is injected when no
// template is given. A function, not a variable: only --help pays for it.
func Help() string {
	return usage + settingsHelp() + usageEnd + "\nDEFAULT TEMPLATE (embedded; injected when the config gives none)\n" + indent(inject.DefaultTemplateYAML(), "  ")
}

// settingsHelp is the SETTINGS section: every setting of the schema with
// its doc tag (inject.SettingDocs), then the keys the function reads
// itself.
func settingsHelp() string {
	var b strings.Builder
	b.WriteString("SETTINGS (SidecarInjection spec fields or ConfigMap data keys; a list is\n")
	b.WriteString("comma-separated in a ConfigMap, a boolean \"true\" or \"false\")\n")
	for _, d := range inject.SettingDocs() {
		b.WriteString(wrap(fmt.Sprintf("  %-22s%s", d.Name, d.Doc), 80, strings.Repeat(" ", 24)))
	}
	return b.String()
}

// wrap breaks line at spaces so that no line is longer than width (a word
// longer than that stands alone), the lines after the first indented by
// prefix, each ending with a line end.
func wrap(line string, width int, prefix string) string {
	var b strings.Builder
	cur := ""
	for _, word := range strings.Split(line, " ") {
		switch {
		case cur == "" || strings.TrimSpace(cur) == "":
			cur += word
			if word == "" {
				cur += " "
			}
		case len(cur)+1+len(word) > width:
			b.WriteString(cur + "\n")
			cur = prefix + word
		default:
			cur += " " + word
		}
	}
	b.WriteString(cur + "\n")
	return b.String()
}

// indent puts prefix before every line of text that is not empty.
func indent(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// usage and usageEnd are the parts of Help above the template, around the
// settings (settingsHelp).
const usage = `inject-fn: add a sidecar (Envoy by default) to the pod templates of
Kubernetes resources, as a KRM function or on YAML files.

USAGE
  inject-fn                              KRM function: ResourceList on stdin and stdout
  inject-fn [--uninject] CONFIG.yaml [INPUT.yaml|-]...
                                         edit plain YAML files; output on stdout,
                                         one line per workload on stderr
  inject-fn --copy-to DIR                copy this binary into DIR as inject-fn, and kinject-cel
                                         (its CEL evaluator) beside it: how an init container
                                         of the image (no shell) puts the function on a volume
                                         for Argo CD's repo-server
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

`

const usageEnd = `  uninject              true: remove earlier injections (of this profile) instead
  admissionPolicy       true: leave the workloads as they are and add the admission
                        policy (MutatingAdmissionPolicy kinject-NAME, NAME the
                        SidecarInjection's, kinject-NAME-PROFILE for a named profile,
                        and its binding; a ValidatingAdmissionPolicy that warns of
                        conflicts): the API server injects new Pods; one set per profile

PROFILES
  Several SidecarInjections among the input resources (kpt fn render without
  configPath or with configPath naming one of them; kpt fn eval without
  arguments) are several profiles, applied in the order of the resources, each
  with its own template and settings. A function config that is not among the
  resources (a kustomize transformer config, kpt fn eval -- key=value) is the
  only one of its run. In file mode, a CONFIG.yaml that starts with a
  SidecarInjection is one profile per SidecarInjection in it. A profile
  configured twice is an error naming both; two profiles adding the same
  container, volume, port or label are a conflict.

OVERRIDES
  A workload may set what the template's parameters declare, by annotation on
  the object or its pod template (the pod template's wins); the embedded
  default declares sidecar.kinject.dev/image, cpu-request, memory-request,
  cpu-limit, memory-limit and concurrency (NAME.sidecar.kinject.dev/... for a
  profile NAME). A bad value is an error result naming the annotation.

RESULTS
  One info result per workload and profile (injected, updated, unchanged, skipped with a
  reason such as not_opted_in, opted_out, host_network), an error result per
  object that cannot be injected (conflict, invalid_object, ...) and for a bad
  config (naming the field). With several profiles, or a named one, each
  message starts with the profile. The function exits 1 when there is an error
  result, after writing the whole ResourceList.

EXAMPLES
  kpt fn eval --exec inject-fn ./app -- mode=opt-in native=true
  kpt fn eval --image kinject/inject-fn:dev --image-pull-policy never ./app
  kpt fn eval --exec inject-fn ./app -- template-configmap=envoy-initializer
  kpt fn eval --exec inject-fn ./app -- uninject=true
  kpt fn eval --exec inject-fn ./app -- uninject=true profile=logs
  kpt fn eval --exec inject-fn ./app -- uninject=true allProfiles=true
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
