package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Users in the static token file.
const (
	AdminUser  = "admin"
	ViewerUser = "viewer"
	// ViewerRole is the Role and RoleBinding name created by GrantViewer.
	ViewerRole = "kinject-viewer"
)

// The control plane's components have users of their own (in
// system:masters), so that the API server's logs and metrics tell them
// apart from the tests' admin.
const (
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	kwokUser              = "kwok"
)

var componentUsers = []string{controllerManagerUser, schedulerUser, kwokUser}

// MetricsUser is the user of the metrics collectors a real Node's tests
// run (metrics-server, Prometheus): not in system:masters, so that they
// work with the RBAC a cluster gives them (MetricsKubeconfig,
// MetricsToken).
const MetricsUser = "kinject-metrics"

// FrontProxyClient is the common name of the client certificate the API
// server's aggregator presents to extension API servers, the one name
// they accept (--requestheader-allowed-names).
const FrontProxyClient = "front-proxy-client"

// writeAuthFiles writes the token file, the service-account key pair and
// both kubeconfig files into c.Dir.
func (c *Cluster) writeAuthFiles() error {
	var err error
	if c.adminToken, err = randomToken(); err != nil {
		return err
	}
	if c.viewerToken, err = randomToken(); err != nil {
		return err
	}
	// token,user,uid,"group1,group2"
	tokens := fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n%s,%s,%s-uid\n",
		c.adminToken, AdminUser, AdminUser, c.viewerToken, ViewerUser, ViewerUser)
	c.componentTokens = map[string]string{}
	for _, user := range componentUsers {
		token, err := randomToken()
		if err != nil {
			return err
		}
		c.componentTokens[user] = token
		tokens += fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n", token, user, strings.ReplaceAll(user, ":", "-"))
	}
	if c.NodeName != "" {
		// The Node authorizer and NodeRestriction know a kubelet by this
		// user and group.
		if c.nodeToken, err = randomToken(); err != nil {
			return err
		}
		tokens += fmt.Sprintf("%s,system:node:%s,node-%s-uid,\"system:nodes\"\n", c.nodeToken, c.NodeName, c.NodeName)
		if c.metricsToken, err = randomToken(); err != nil {
			return err
		}
		tokens += fmt.Sprintf("%s,%s,%s-uid\n", c.metricsToken, MetricsUser, MetricsUser)
	}
	if err := writeFile(filepath.Join(c.Dir, "tokens.csv"), tokens); err != nil {
		return err
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := writeFile(filepath.Join(c.Dir, "sa.key"), string(priv)); err != nil {
		return err
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := writeFile(filepath.Join(c.Dir, "sa.pub"), string(pubPEM)); err != nil {
		return err
	}

	c.AdminKubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	c.ViewerKubeconfig = filepath.Join(c.Dir, "viewer.kubeconfig")
	if err := writeFile(c.AdminKubeconfig, kubeconfig(c.URL, AdminUser, c.adminToken)); err != nil {
		return err
	}
	if c.NodeName != "" {
		c.NodeKubeconfig = filepath.Join(c.Dir, "node.kubeconfig")
		if err := writeFile(c.NodeKubeconfig, kubeconfig(c.URL, "system:node:"+c.NodeName, c.nodeToken)); err != nil {
			return err
		}
		c.MetricsKubeconfig = filepath.Join(c.Dir, "metrics.kubeconfig")
		if err := writeFile(c.MetricsKubeconfig, kubeconfig(c.URL, MetricsUser, c.metricsToken)); err != nil {
			return err
		}
	}
	if err := c.writeFrontProxyCerts(); err != nil {
		return err
	}
	return writeFile(c.ViewerKubeconfig, kubeconfig(c.URL, ViewerUser, c.viewerToken))
}

// MetricsToken is MetricsUser's bearer token (with a real Node only),
// for a collector that reads no kubeconfig (Prometheus).
func (c *Cluster) MetricsToken() string { return c.metricsToken }

// writeFrontProxyCerts writes the front proxy's CA and the aggregator's
// client certificate (FrontProxyClient) signed by it: the API server
// proxies requests for an aggregated API (an APIService, such as
// metrics-server's) with that certificate and the user in request
// headers, which the extension server trusts because the API server
// publishes the CA in kube-system/extension-apiserver-authentication.
func (c *Cluster) writeFrontProxyCerts() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate front proxy CA key: %w", err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kinject-front-proxy-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create front proxy CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("parse front proxy CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate front proxy client key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: FrontProxyClient},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create front proxy client certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal front proxy client key: %w", err)
	}
	for name, block := range map[string]*pem.Block{
		"front-proxy-ca.crt":     {Type: "CERTIFICATE", Bytes: caDER},
		"front-proxy-client.crt": {Type: "CERTIFICATE", Bytes: der},
		"front-proxy-client.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := writeFile(filepath.Join(c.Dir, name), string(pem.EncodeToMemory(block))); err != nil {
			return err
		}
	}
	return nil
}

// frontProxyArgs are the API server's flags that let it aggregate
// extension API servers: the front proxy's CA, the names and headers
// they accept, and the client certificate it proxies with.
func (c *Cluster) frontProxyArgs() []string {
	return []string{
		"--requestheader-client-ca-file=" + filepath.Join(c.Dir, "front-proxy-ca.crt"),
		"--requestheader-allowed-names=" + FrontProxyClient,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + filepath.Join(c.Dir, "front-proxy-client.crt"),
		"--proxy-client-key-file=" + filepath.Join(c.Dir, "front-proxy-client.key"),
	}
}

// componentKubeconfig writes the kubeconfig of a control plane component
// and returns its path.
func (c *Cluster) componentKubeconfig(user string) string {
	path := filepath.Join(c.Dir, strings.ReplaceAll(user, ":", "-")+".kubeconfig")
	// The directory was written moments ago; a failure shows as the
	// component's own error.
	_ = writeFile(path, kubeconfig(c.URL, user, c.componentTokens[user]))
	return path
}

// rootCAFile is the CA the controller manager publishes to namespaces
// and puts in service-account tokens: the API server's self-signed
// serving certificate, which it wrote into its cert dir at start.
func (c *Cluster) rootCAFile() string {
	return filepath.Join(c.Dir, "certs", "apiserver.crt")
}

func kubeconfig(server, user, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kinject
  cluster:
    server: %[1]s
    insecure-skip-tls-verify: true
users:
- name: %[2]s
  user:
    token: %[3]s
contexts:
- name: %[2]s
  context:
    cluster: kinject
    user: %[2]s
    namespace: default
current-context: %[2]s
`, server, user, token)
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func writeFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// GrantViewer lets the viewer user get, list and watch deployments (and
// nothing else) in namespace, through a Role and RoleBinding named
// ViewerRole. It returns once the API server authorizes the viewer to list
// deployments there.
func (c *Cluster) GrantViewer(ctx context.Context, namespace string) error {
	admin, err := c.AdminClient()
	if err != nil {
		return err
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: ViewerRole, Namespace: namespace},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"apps"},
			Resources: []string{"deployments"},
			Verbs:     []string{"get", "list", "watch"},
		}},
	}
	if _, err := admin.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create role %s/%s: %w", namespace, ViewerRole, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ViewerRole, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ViewerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: ViewerUser}},
	}
	if _, err := admin.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create rolebinding %s/%s: %w", namespace, ViewerRole, err)
	}

	viewer, err := c.ViewerClient()
	if err != nil {
		return err
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "list", Group: "apps", Resource: "deployments",
		},
	}}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		res, err := viewer.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return res.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("wait for viewer grant in %s: %w", namespace, err)
	}
	return nil
}
