package cmd

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
)

// completeArgs completes TYPE, then NAMEs of that type from the cluster.
func (o *Options) completeArgs(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 && !strings.Contains(toComplete, "/") {
		return workloadTypes, cobra.ShellCompDirectiveNoFileComp
	}
	typ, prefix := "", ""
	if len(args) > 0 {
		typ = args[0]
	} else {
		typ, _, _ = strings.Cut(toComplete, "/")
		prefix = typ + "/"
	}
	names := o.listNames(typ)
	for i := range names {
		names[i] = prefix + names[i]
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// listNames lists the names of objects of type typ in the namespace; any
// error yields no completions.
func (o *Options) listNames(typ string) []string {
	mapper, err := o.ConfigFlags.ToRESTMapper()
	if err != nil {
		return nil
	}
	gvr, err := mapper.ResourceFor(resourceArg(typ))
	if err != nil {
		return nil
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	ns, _, _ := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	list, err := client.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names
}

func resourceArg(typ string) schema.GroupVersionResource {
	gvr, gr := schema.ParseResourceArg(typ)
	if gvr != nil {
		return *gvr
	}
	return gr.WithVersion("")
}

// completeProfiles completes --profile with the named profiles whose
// status records the namespace's workloads carry; one page of each kind
// is enough to find them, and any error yields no completions.
func completeProfiles(flags *genericclioptions.ConfigFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns, _, _ := flags.ToRawKubeConfigLoader().Namespace()
		found := map[string]bool{}
		for _, gvr := range profileKinds {
			list, err := client.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{Limit: 500})
			if err != nil {
				continue
			}
			for _, item := range list.Items {
				for key := range templateAnnotations(item.Object) {
					if p, ok := naming.ProfileOfStatusKey(key); ok && p != "" && strings.HasPrefix(p, toComplete) {
						found[p] = true
					}
				}
			}
		}
		names := slices.Sorted(maps.Keys(found))
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// templateAnnotations returns the pod template's annotations of a
// workload (a CronJob's under its job template).
func templateAnnotations(obj map[string]any) map[string]string {
	if m, ok, _ := unstructured.NestedStringMap(obj, "spec", "template", "metadata", "annotations"); ok {
		return m
	}
	m, _, _ := unstructured.NestedStringMap(obj, "spec", "jobTemplate", "spec", "template", "metadata", "annotations")
	return m
}
