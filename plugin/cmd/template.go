package cmd

import (
	"context"
	"fmt"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// loadInjector builds the injector from the template flags (--template,
// --template-configmap, else the embedded default) and the policy flags,
// which override settings a SidecarInjection file carries.
func (o *Options) loadInjector() (*inject.Injector, error) {
	var (
		tmpl     *inject.Template
		settings inject.Settings
	)
	switch {
	case o.TemplateFile != "":
		cfg, err := o.loadTemplateFile(o.TemplateFile)
		if err != nil {
			return nil, err
		}
		tmpl, settings = cfg.Template, cfg.Settings
		if tmpl == nil && settings.TemplateConfigMap != "" {
			if tmpl, err = o.templateFromConfigMap(settings.TemplateConfigMap); err != nil {
				return nil, err
			}
		}
	case o.TemplateConfigMap != "":
		var err error
		if tmpl, err = o.templateFromConfigMap(o.TemplateConfigMap); err != nil {
			return nil, err
		}
	}
	if tmpl == nil {
		tmpl = inject.DefaultTemplate()
	}
	if err := o.applySettings(&settings); err != nil {
		return nil, err
	}
	in, err := inject.New(tmpl, settings)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	for _, w := range in.Template().Warnings() {
		fmt.Fprintf(o.ErrOut, "Warning: template widens privileges: %s\n", w)
	}
	return in, nil
}

// loadTemplateFile reads a configuration file: its first document
// configures, and ConfigMaps in later documents serve spec.templateRef
// before the cluster is asked.
func (o *Options) loadTemplateFile(path string) (*inject.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	cfg, err := inject.ParseConfig(data, o.configMapLookup)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// applySettings overlays the flags that were given on s.
func (o *Options) applySettings(s *inject.Settings) error {
	if o.Mode != "" {
		s.Policy.Mode = inject.Mode(o.Mode)
	}
	if len(o.Kinds) > 0 {
		s.Policy.Kinds = o.Kinds
	}
	if o.nativeSet {
		native := o.Native
		s.Native = &native
	}
	if o.hostNetworkSet {
		s.Policy.InjectHostNetwork = o.InjectHostNetwork
	}
	if o.Image != "" {
		s.Image = o.Image
	}
	if o.Strict {
		s.Strict = true
	}
	if o.Local && o.Selector != "" {
		s.Policy.Selector = o.Selector
	}
	if len(o.PodTemplatePaths) > 0 {
		if err := s.SetList("podTemplatePaths", o.PodTemplatePaths); err != nil {
			return fmt.Errorf("--pod-template-path: %w", err)
		}
	}
	return nil
}

// templateFromConfigMap reads "[NAMESPACE/]NAME[:KEY]" from the cluster.
func (o *Options) templateFromConfigMap(ref string) (*inject.Template, error) {
	r, err := inject.ParseTemplateRef(ref)
	if err != nil {
		return nil, fmt.Errorf("--template-configmap: %w", err)
	}
	tmpl, err := inject.ResolveTemplateRef(r, o.configMapLookup)
	if err != nil {
		return nil, fmt.Errorf("template configmap %s: %w", ref, err)
	}
	return tmpl, nil
}

// configMapLookup reads a ConfigMap from the cluster for template
// references; an empty namespace means the command's namespace.
func (o *Options) configMapLookup(namespace, name string) (*yaml.RNode, error) {
	if o.Local {
		return nil, fmt.Errorf("the template refers to ConfigMap %s in the cluster, which --local does not read; use a template file", name)
	}
	if namespace == "" {
		namespace = o.namespace
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get configmap %s/%s: %w", namespace, name, err)
	}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	cm.ManagedFields = nil
	data, err := yaml.Marshal(cm)
	if err != nil {
		return nil, fmt.Errorf("encode configmap %s/%s: %w", namespace, name, err)
	}
	return yaml.Parse(string(data))
}
