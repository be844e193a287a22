package cmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// workloadTypes are offered when no type has been typed yet.
var workloadTypes = []string{"deployments", "statefulsets", "daemonsets", "cronjobs", "replicasets",
	"replicationcontrollers", "jobs", "pods", "podtemplates"}

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
