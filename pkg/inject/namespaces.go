package inject

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
)

// systemNamespaces hold the cluster's own Pods (DNS, the control plane's
// add-ons, node leases). A sidecar that cannot start there takes the
// cluster down with it, so they are never selected unless named.
var systemNamespaces = []string{"kube-node-lease", "kube-public", "kube-system"}

// SystemNamespaces returns the namespaces that admission bindings and live
// selections (--all, -A, -l) leave out unless a user names them, sorted.
func SystemNamespaces() []string { return append([]string(nil), systemNamespaces...) }

// IsSystemNamespace reports whether ns is one of SystemNamespaces.
func IsSystemNamespace(ns string) bool {
	for _, s := range systemNamespaces {
		if ns == s {
			return true
		}
	}
	return false
}

// ValidateNamespace checks that ns can name a namespace (a DNS label:
// lower-case letters, digits and '-', at most 63 characters).
func ValidateNamespace(ns string) error {
	if grammar.IsDNSLabel(ns) {
		return nil
	}
	hint := ""
	if strings.HasPrefix(ns, "!") {
		hint = " (to leave a namespace out, use --exclude-namespaces " + strings.TrimPrefix(ns, "!") + ")"
	}
	return fmt.Errorf("namespace %q is not a valid name: lower-case letters, digits and '-', at most 63 characters%s", ns, hint)
}
