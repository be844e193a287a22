package cmd

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// localHint ends every "no cluster" error: the files a user meant may not
// need one.
const localHint = "to inject manifest files without a cluster, use --local -f FILE"

// checkCluster makes sure there is a cluster to talk to before any object
// is read, and when there is none says why in one line, whatever the
// number of objects or documents: no kubeconfig, a server that does not
// answer, one that refuses the credentials, or one that refuses the user
// (403). It costs one GET /version
// (not cached: the discovery cache would answer for a server that is gone).
func (o *Options) checkCluster(ctx context.Context) error {
	loader := o.ConfigFlags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return fmt.Errorf("read kubeconfig: %w", err)
	}
	if clientcmdapi.IsConfigEmpty(&raw) && flagValue(o.ConfigFlags.APIServer) == "" && !inCluster() {
		where := strings.Join(loader.ConfigAccess().GetLoadingPrecedence(), ", ")
		return fmt.Errorf("no cluster configured: no kubeconfig found (looked for %s; set KUBECONFIG or --kubeconfig) and no --server given; %s", where, localHint)
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w; %s", err, localHint)
	}
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	if err := client.RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		return o.clusterError(cfg, raw, err)
	}
	return nil
}

// clusterError words the error of the first request to the cluster.
func (o *Options) clusterError(cfg *rest.Config, raw clientcmdapi.Config, err error) error {
	context := flagValue(o.ConfigFlags.Context)
	if context == "" {
		context = raw.CurrentContext
	}
	at := cfg.Host
	if context != "" {
		at += fmt.Sprintf(" (context %q)", context)
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the cluster at %s refused the credentials (401 Unauthorized): log in again or renew the kubeconfig's credentials; %s", at, localHint)
	case apierrors.IsForbidden(err):
		return forbiddenError(at, err)
	case errors.As(err, &unknownAuthority) || errors.As(err, &hostname):
		return fmt.Errorf("cannot verify the certificate of the cluster at %s: %s; check the kubeconfig's certificate-authority; %s", at, rootCause(err), localHint)
	case isUnreachable(err):
		return fmt.Errorf("cannot reach the cluster at %s: %s (is it running, and is this the right context?); %s", at, rootCause(err), localHint)
	}
	return fmt.Errorf("the cluster at %s: %w", at, err)
}

// forbiddenError words a 403 on the first request: the credentials are
// good, but the user may not do what was asked (read /version, or
// impersonate the user of --as). It names the user the server named, what
// it refused, and what kubectl inject needs.
func forbiddenError(at string, err error) error {
	msg := oneLine(strings.TrimPrefix(rootCause(err), "forbidden: "))
	who := ""
	if m := forbiddenUser.FindStringSubmatch(msg); m != nil {
		who = fmt.Sprintf(" to user %q", m[1])
	}
	return fmt.Errorf("the cluster at %s refused access%s (403 Forbidden: %s): kubectl inject needs get, list and patch on the objects it injects; ask the cluster's administrator for them (kubectl auth can-i patch deployments says what this user may do); %s", at, who, msg, localHint)
}

// oneLine makes a message the server sent fit the error's line: a proxy
// may answer with a page of HTML.
func oneLine(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "..."
	}
	return msg
}

// forbiddenUser finds the user in the API server's message of a 403:
// `forbidden: User "jane" cannot get path "/version"`.
var forbiddenUser = regexp.MustCompile(`User "([^"]*)" cannot`)

// isUnreachable reports whether err means that nothing answered: refused
// or reset connections, unknown hosts, timeouts.
func isUnreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var urlErr *url.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &dns), errors.As(err, &op):
		return true
	case errors.As(err, &urlErr) && urlErr.Timeout():
		return true
	}
	return false
}

// rootCause is the innermost message of err: "connection refused" rather
// than `Get "https://...": dial tcp 127.0.0.1:1: connect: connection refused`.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// inCluster reports whether this runs in a Pod with a service account,
// where client-go needs no kubeconfig (rest.InClusterConfig reads the
// Service's environment variables first).
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}

func flagValue(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// dynamicClient builds a dynamic client from the kubeconfig flags.
func dynamicClient(cf *genericclioptions.ConfigFlags) (dynamic.Interface, error) {
	_, client, err := clusterClient(cf)
	return client, err
}

// clusterClient builds the REST config of the kubeconfig flags and a
// dynamic client on it.
func clusterClient(cf *genericclioptions.ConfigFlags) (*rest.Config, dynamic.Interface, error) {
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("client: %w", err)
	}
	return cfg, client, nil
}
