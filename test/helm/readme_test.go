package helm

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// TestReadmeHelm holds the README's Helm section to what the tests here
// run: the plugin's install commands and name, Helm 3's post-renderer line,
// the hooks limitation, the kustomize command and the archive's name.
func TestReadmeHelm(t *testing.T) {
	readme := testbin.ReadFile(t, filepath.Join(repoRoot, "README.md"))
	start := strings.Index(readme, "\n### Helm\n")
	if start < 0 {
		t.Fatal("README.md has no Helm section")
	}
	section := readme[start+1:]
	section = section[:strings.Index(section[1:], "\n### ")+2]
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
			t.Errorf("the README's Helm section lacks %q", want)
		}
	}
}
