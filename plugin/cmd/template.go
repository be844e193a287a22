package cmd

import (
	"context"
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/config"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// configMapLookup reads a ConfigMap from the cluster for template
// references; an empty namespace means the command's namespace.
func (o *Options) configMapLookup(namespace, name string) (*yaml.RNode, error) {
	if o.Local {
		return config.NoCluster(namespace, name)
	}
	if namespace == "" {
		namespace = o.namespace
	}
	return readConfigMap(o.ConfigFlags, namespace, name)
}

// clusterConfigMaps is the ConfigMap lookup of the commands that always
// have a cluster (policy, status): an empty namespace means the
// kubeconfig's.
func clusterConfigMaps(flags *genericclioptions.ConfigFlags) inject.ConfigMapLookup {
	return func(namespace, name string) (*yaml.RNode, error) {
		if namespace == "" {
			ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return nil, fmt.Errorf("read kubeconfig namespace: %w", err)
			}
			namespace = ns
		}
		return readConfigMap(flags, namespace, name)
	}
}

// readConfigMap gets a ConfigMap as a kyaml node; nil, nil when there is
// none of that name.
func readConfigMap(flags *genericclioptions.ConfigFlags, namespace, name string) (*yaml.RNode, error) {
	cfg, err := flags.ToRESTConfig()
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
