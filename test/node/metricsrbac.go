package node

import (
	"context"
	"fmt"
	"strconv"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// metricsRole names the ClusterRole of cluster.MetricsUser and the
// bindings StartMetricsServer and StartPrometheus create.
const metricsRole = "kinject-metrics"

// grantMetrics gives cluster.MetricsUser what metrics-server's own
// manifests give its ServiceAccount: read Nodes and Pods and the
// kubelet's metrics, and, as an extension API server, check the tokens
// and permissions of the requests the aggregator proxies to it
// (system:auth-delegator) and read the front proxy's CA from
// kube-system/extension-apiserver-authentication. Prometheus uses the
// same user to scrape the kubelet. Objects already there are kept: both
// collectors grant it, and the grant outlives them (it is the cluster's).
func grantMetrics(ctx context.Context, admin kubernetes.Interface) error {
	user := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: cluster.MetricsUser}}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: metricsRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create clusterrole %s: %w", metricsRole, err)
	}
	for _, b := range []*rbacv1.ClusterRoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: metricsRole}, Subjects: user,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsRole}},
		{ObjectMeta: metav1.ObjectMeta{Name: metricsRole + ":auth-delegator"}, Subjects: user,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"}},
	} {
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create clusterrolebinding %s: %w", b.Name, err)
		}
	}
	reader := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: metricsRole + ":auth-reader", Namespace: metav1.NamespaceSystem},
		Subjects:   user,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
	}
	if _, err := admin.RbacV1().RoleBindings(metav1.NamespaceSystem).Create(ctx, reader, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create rolebinding %s/%s: %w", reader.Namespace, reader.Name, err)
	}
	return nil
}

// kubeletAddress is the host:port the kubelet of the Node serves on, as
// its Node's status says (the kubelet's port is picked free at start).
func kubeletAddress(ctx context.Context, admin kubernetes.Interface) (string, error) {
	n, err := admin.CoreV1().Nodes().Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get node %s: %w", Name, err)
	}
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		return "", fmt.Errorf("node %s reports no kubelet port", Name)
	}
	return NodeIP + ":" + strconv.Itoa(int(port)), nil
}
