package cmd

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/plugin/local"
)

// configMapLookup reads a ConfigMap from the cluster for template
// references; an empty namespace means the command's namespace.
func (o *Options) configMapLookup(namespace, name string) (*yaml.RNode, error) {
	if o.Local {
		return local.NoCluster(namespace, name)
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
