package helm

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/mddoc"
)

// TestHelmDoc holds the Helm section of docs/gitops.md to what the tests
// here run: the plugin's install commands and name, Helm 3's post-renderer
// line, the hooks limitation, the kustomize command and the archive's name.
func TestHelmDoc(t *testing.T) {
	const doc = "docs/gitops.md"
	section := mddoc.SectionOf(t, doc, "## Helm")
	for _, want := range []string{
		"\nhelm plugin install plugin/helm\n",
		"\nhelm plugin install --verify=false dist/kubectl-inject-0.1.0-helm-plugin-linux-amd64.tgz ",
		"\nhelm install web ./chart --post-renderer kubectl-inject\n",
		"\nhelm install web ./chart " + strings.Join(helm3PostRenderer, " ") + "\n",
		"**Helm 3 never\npost-renders hooks**",
		"helm/helm#7891",
		"\nkustomize build --enable-helm --enable-alpha-plugins --enable-exec examples/helm ",
		"compared parsed",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the Helm section of %s lacks %q", doc, want)
		}
	}
}
