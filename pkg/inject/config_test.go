package inject_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, config, wantErr string
	}{
		{"not yaml", "containers: [", "template: not valid YAML: yaml: line 1: did not find expected node content"},
		{"empty", "", "template: empty document"},
		{"scalar", "hello", "template: must be a mapping (a ConfigMap, a SidecarInjection or a partial Pod spec)"},
		{"no containers", "volumes: []", "template: template has no containers or initContainers"},
		{"containers not a list", "containers: {name: a}", "template: containers: must be a list"},
		{"container not a mapping", "containers: [a]", "template: containers[0]: must be a mapping"},
		{"parameters not a list", "containers: [{name: a, image: x}]\nparameters: {annotation: p}", "template: parameters: must be a list"},
		{"reserved ports not a list", "containers: [{name: a, image: x}]\nreservedPorts: 9901", "template: reservedPorts: must be a list"},
		{"container without name", "containers: [{image: x}]", "template: containers[0].name: is required"},
		{"container without image", "containers: [{name: a}]", `template: containers[0].image: is required (container "a")`},
		{"bad name", "containers: [{name: A_b, image: x}]", `template: containers[0].name: "A_b" is not a valid name (lower-case letters, digits and '-', at most 63)`},
		{"duplicate names", "containers: [{name: a, image: x}]\ninitContainers: [{name: a, image: y}]", `template: initContainers[0].name: "a" is also used by containers[0]`},
		{"duplicate volumes", "containers: [{name: a, image: x}]\nvolumes: [{name: v}, {name: v}]", `template: volumes[1].name: "v" is also used by volumes[0]`},
		{"unknown field", "containers: [{name: a, image: x}]\nhostNetwork: true", "template: hostNetwork: unknown field (a template holds containers, initContainers, volumes, metadata, parameters, reservedPorts and drain)"},
		{"status annotation", "containers: [{name: a, image: x}]\nmetadata: {annotations: {sidecar.kinject.dev/status: x}}", "template: metadata.annotations.sidecar.kinject.dev/status: is managed by kubectl-inject and cannot be set by a template"},
		{"unknown kind", "apiVersion: v1\nkind: Secret", `template: kind "Secret" (apiVersion "v1") is not a template: use a ConfigMap, a kinject.dev/v1alpha1 SidecarInjection or a partial Pod spec`},
		{"configmap without config", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: envoy-initializer}\ndata: {other: x}", `ConfigMap "envoy-initializer": data.config: is missing (a template ConfigMap holds a partial Pod spec under data.config)`},
		{"configmap config not yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {config: '{'}", `ConfigMap "c": data.config: not YAML: yaml: line 1: did not find expected node content`},
		{"configmap config invalid", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {config: 'containers: [{name: a}]'}", `ConfigMap "c": data.config.containers[0].image: is required (container "a")`},
		{"wrong apiVersion", "apiVersion: kinject.dev/v2\nkind: SidecarInjection", `SidecarInjection: apiVersion: "kinject.dev/v2" is not supported (want kinject.dev/v1alpha1)`},
		{"no spec", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}", `SidecarInjection "s": spec: is required`},
		{"spec a list", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: [a]", `SidecarInjection "s": spec: must be a mapping, not a list`},
		{"ref beside a ConfigMap whose metadata is a list", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {templateRef: {name: c}}\n---\nkind: ConfigMap\nmetadata: [c]\n---\n[a]", `SidecarInjection "s": spec.templateRef: ConfigMap "c": not found`},
		{"bad mode", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {mode: sometimes}", `SidecarInjection "s": spec.mode: "sometimes" is not a mode (want opt-out or opt-in)`},
		{"bad native", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {native: maybe}", `SidecarInjection "s": spec.native: "maybe" is not a boolean (want true or false)`},
		{"unknown setting", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {colour: blue}", `SidecarInjection "s": spec.colour: unknown setting "colour" (known: profile, mode, kinds, apiGroups, namespaces, excludeNamespaces, selector, injectHostNetwork, strict, podTemplatePaths, image, native, allProfiles, templateConfigMap, template, templateRef)`},
		{"bad path", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {podTemplatePaths: [Rollout]}", `SidecarInjection "s": spec.podTemplatePaths: pod template path "Rollout": want Kind[.group]=field.path, e.g. Rollout.argoproj.io=spec.template`},
		{"setting twice", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {injectHostNetwork: true, inject-host-network: false}", `SidecarInjection "s": spec.inject-host-network: injectHostNetwork is set already (as spec.injectHostNetwork): set it once`},
		{"list a mapping", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {kinds: {a: b}}", `SidecarInjection "s": spec.kinds: must be a list of strings or a comma-separated string`},
		{"list of lists", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {kinds: [[a]]}", `SidecarInjection "s": spec.kinds: must be a list of strings`},
		{"text a list", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {image: [a]}", `SidecarInjection "s": spec.image: must be a string`},
		{"flag a mapping", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {strict: {a: b}}", `SidecarInjection "s": spec.strict: must be true or false`},
		{"bad namespace", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {excludeNamespaces: 'a, B'}", `SidecarInjection "s": spec.excludeNamespaces: namespace "B" is not a valid name: lower-case letters, digits and '-', at most 63 characters`},
		{"bad profile", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {profile: default}", `SidecarInjection "s": spec.profile: profile "default": the default profile has no name; leave the profile out to use it (a named profile is another sidecar of its own)`},
		{"bad selector", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {selector: 'app in (a'}", `SidecarInjection "s": spec.selector: "app in (a": unable to parse requirement: found '', expected: ',' or ')'`},
		{"bad configmap ref", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {templateConfigMap: 'ns/'}", `SidecarInjection "s": spec.templateConfigMap: template ConfigMap reference "": want [NAMESPACE/]NAME[:KEY]`},
		{"template and ref", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {templateRef: {name: c}, template: {containers: [{name: a, image: x}]}}", `SidecarInjection "s": spec.template and spec.templateRef: set one, not both`},
		{"ref not found", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {templateRef: {name: missing}}", `SidecarInjection "s": spec.templateRef: ConfigMap "missing": not found`},
		{"ref without name", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {templateRef: {key: x}}", `SidecarInjection "s": spec.templateRef.name: is required`},
	}
	lookup := func(namespace, name string) (*yaml.RNode, error) { return nil, nil }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := inject.ParseConfig([]byte(c.config), lookup)
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("error = %v\nwant    %s", err, c.wantErr)
			}
		})
	}
}

func TestNewRejectsBadSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		settings inject.Settings
		wantErr  string
	}{
		{"bad selector", inject.Settings{Policy: inject.Policy{Selector: "app in (a"}}, `selector: "app in (a"`},
		{"bad mode", inject.Settings{Policy: inject.Policy{Mode: "always"}}, `mode: "always" is not a mode`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := inject.New(inject.DefaultTemplate(), c.settings)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error = %v, want it to contain %q", err, c.wantErr)
			}
		})
	}
}

func TestDecodeFlatSettings(t *testing.T) {
	t.Parallel()
	s, o, err := inject.DecodeSpec(inject.FlatSettings([][2]string{
		{"mode", "opt-in"}, {"native", "true"}, {"image", "envoyproxy/envoy:v1.37.0"}, {"kinds", "Deployment, StatefulSet"},
		{"namespaces", "a,b"}, {"selector", "app=web"}, {"inject-host-network", "true"},
		{"pod-template-paths", "Rollout.argoproj.io=spec.template"}, {"template-configmap", "mesh/envoy-initializer:config"},
	}), "data")
	if err != nil {
		t.Fatal(err)
	}
	if s.Policy.Mode != inject.OptIn || s.Native == nil || !*s.Native || len(s.Policy.Kinds) != 2 || s.Policy.Kinds[1] != "StatefulSet" ||
		!s.Policy.InjectHostNetwork || len(s.PodTemplatePaths) != 1 || s.PodTemplatePaths[0].String() != "Rollout.argoproj.io=spec.template" ||
		o.TemplateConfigMap != "mesh/envoy-initializer:config" || s.Image != "envoyproxy/envoy:v1.37.0" || s.Policy.Selector != "app=web" {
		t.Errorf("settings not applied: %+v", s)
	}
}

func TestDefaultTemplateIsTheSeedModernized(t *testing.T) {
	t.Parallel()
	tpl := inject.DefaultTemplate()
	if got := strings.Join(tpl.Names(), ","); got != "envoy" {
		t.Errorf("names = %s", got)
	}
	if len(tpl.Containers) != 0 || len(tpl.InitContainers) != 1 {
		t.Fatalf("the default has %d containers and %d init containers, want one native sidecar", len(tpl.Containers), len(tpl.InitContainers))
	}
	out, err := yaml.NewRNode(tpl.InitContainers[0]).String()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"image: envoyproxy/envoy:v1.", "containerPort: 10000", "- --concurrency\n", `- "4"`, "- --config-yaml\n", "port_value: $(KINJECT_APP_PORT)", "cpu: 100m", "memory: 64Mi", "cpu: 1000m", "memory: 512Mi", "readOnlyRootFilesystem: true", "restartPolicy: Always", "startupProbe:\n  httpGet:\n    path: /ready\n    port: 9902"} {
		if !strings.Contains(out, want) {
			t.Errorf("default container lacks %q:\n%s", want, out)
		}
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"v":1,"template":"x","containers":["envoy"]}`:                        "",
		`{"v":2,"template":"x"}`:                                               "status version 2 is not supported",
		`{"v":1}`:                                                              "has no template hash",
		`{"v":1,"template":"x"} {}`:                                            "trailing data",
		`{"v":1,"template":"x","containers":"envoy"}`:                          "cannot unmarshal string",
		`{"v":1,"template":"x","empty":{"volumes":"\n  "}}`:                    "",
		`{"v":1,"template":"x","empty":{"volumes":" x "}}`:                     `empty: "volumes": " x " is not the blank space`,
		`{"v":1,"template":"x","empty":{"template":" "}}`:                      `empty: unknown field "template"`,
		`{"v":1,"template":"x","created":["spec"]}`:                            `created: unknown field "spec"`,
		`{"v":1,"template":"x","created":["volumes"],"empty":{"volumes":" "}}`: `empty: "volumes"`,
	}
	for in, want := range cases {
		_, err := record.Parse(naming.StatusAnnotation, in)
		switch {
		case want == "" && err != nil:
			t.Errorf("ParseStatus(%s): %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ParseStatus(%s) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestTemplateWarnings(t *testing.T) {
	t.Parallel()
	tpl, err := inject.ParseTemplate([]byte(`
containers:
- name: proxy
  image: example/proxy:1.0
  securityContext:
    privileged: true
    runAsUser: 0
    capabilities:
      add: [NET_ADMIN, NET_RAW]
volumes:
- name: host
  hostPath: {path: /var/run}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"containers[0] (proxy): securityContext.privileged is true",
		"containers[0] (proxy): securityContext.runAsUser is 0 (root)",
		"containers[0] (proxy): securityContext.capabilities.add: NET_ADMIN, NET_RAW",
		"volumes[0] (host): hostPath /var/run mounts the node's filesystem",
	}
	if got := tpl.Warnings(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(inject.DefaultTemplate().Warnings()) != 0 {
		t.Errorf("the default template must not widen privileges: %v", inject.DefaultTemplate().Warnings())
	}
	if _, err := inject.New(tpl, inject.Settings{}); err != nil {
		t.Errorf("without strict, warnings are not errors: %v", err)
	}
	_, err = inject.New(tpl, inject.Settings{Strict: true})
	if err == nil || !strings.HasPrefix(err.Error(), "template widens privileges (strict): containers[0] (proxy): securityContext.privileged is true;") {
		t.Errorf("strict error = %v", err)
	}
}

func TestParseConfigResolvesLaterConfigMaps(t *testing.T) {
	t.Parallel()
	const ref = "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {templateRef: {name: tpl, namespace: mesh}}\n"
	cm := func(ns, image string) string {
		return "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: tpl" + ns + "}\ndata:\n  config: 'containers: [{name: p, image: " + image + "}]'\n"
	}
	cases := []struct {
		name, file string
		fallback   inject.ConfigMapLookup
		wantImage  string
		wantErr    string
	}{
		{"same namespace", ref + cm(", namespace: mesh", "a"), nil, "a", ""},
		{"no namespace matches any", ref + cm("", "b"), nil, "b", ""},
		{"other namespace falls back", ref + cm(", namespace: other", "c"), func(ns, name string) (*yaml.RNode, error) {
			return yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tpl}\ndata:\n  config: 'containers: [{name: p, image: from-cluster}]'\n")
		}, "from-cluster", ""},
		{"two matches are an error", ref + cm("", "d") + cm(", namespace: mesh", "e"), nil, "", `2 ConfigMaps named "tpl": name the namespace too (NAMESPACE/NAME)`},
		{"not found", ref, nil, "", `ConfigMap "tpl": not found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := inject.ParseConfig([]byte(c.file), c.fallback)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := yaml.NewRNode(cfg.Template.Containers[0]).Field("image").Value.YNode().Value; got != c.wantImage {
				t.Errorf("image %q, want %q", got, c.wantImage)
			}
		})
	}
}

// TestDecodeSettingsRefusesOptions: the front ends' options share the
// document's schema but are not settings of what is injected:
// DecodeSettings names one given to it, DecodeSpec returns it apart.
func TestDecodeSettingsRefusesOptions(t *testing.T) {
	t.Parallel()
	flat := inject.FlatSettings([][2]string{{"all-profiles", "true"}, {"mode", "opt-in"}})
	_, err := inject.DecodeSettings(flat, "data")
	var fe *inject.FieldError
	if !errors.As(err, &fe) || fe.Field != "data.allProfiles" || !strings.Contains(fe.Err.Error(), "front end's option") {
		t.Errorf("DecodeSettings: %v, want a field error at data.allProfiles", err)
	}
	s, o, err := inject.DecodeSpec(flat, "data")
	if err != nil || !o.AllProfiles || s.Policy.Mode != inject.OptIn {
		t.Errorf("DecodeSpec: %+v, %+v, %v", s, o, err)
	}
	if _, _, err := inject.DecodeSpec(inject.FlatSettings([][2]string{{"templateConfigMap", "a:"}}), "spec"); !errors.As(err, &fe) || fe.Field != "spec.templateConfigMap" {
		t.Errorf("DecodeSpec of a bad templateConfigMap: %v", err)
	}
}
