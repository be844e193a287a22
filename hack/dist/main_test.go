package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestParsePlatforms(t *testing.T) {
	ps, err := parsePlatforms("windows/amd64, linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	if got := platformList(ps); got != "linux/amd64,windows/amd64" {
		t.Errorf("got %s, want the release order", got)
	}
	if ps, _ := parsePlatforms(""); len(ps) != 6 {
		t.Errorf("default: %d platforms, want 6", len(ps))
	}
	for _, bad := range []string{"linux", "plan9/amd64", ","} {
		if _, err := parsePlatforms(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{archiveName("v1.2.3", platform{"linux", "arm64"}), "kubectl-inject_v1.2.3_linux_arm64.tar.gz"},
		{archiveName("v1.2.3", platform{"windows", "amd64"}), "kubectl-inject_v1.2.3_windows_amd64.zip"},
		{rawBinaryName(fnName, "v1.2.3", platform{"darwin", "arm64"}), "inject-fn_v1.2.3_darwin_arm64"},
		{rawBinaryName(fnName, "v1.2.3", platform{"windows", "arm64"}), "inject-fn_v1.2.3_windows_arm64.exe"},
		{rawBinaryName(helperName, "v1.2.3", platform{"linux", "amd64"}), "kinject-cel_v1.2.3_linux_amd64"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

// Archives depend only on their contents: same input, same bytes.
func TestArchivesReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for _, p := range []platform{{"linux", "amd64"}, {"windows", "amd64"}} {
		var names []string
		for _, name := range pluginBinaries(p) {
			names = append(names, filepath.Join(bin, name))
			writeFile(t, names[len(names)-1], name)
		}
		a, b := filepath.Join(dir, "a"+p.OS), filepath.Join(dir, "b"+p.OS)
		if err := writeArchive(a, p, bin, []byte("license")); err != nil {
			t.Fatal(err)
		}
		// A different file time must not matter.
		for _, name := range names {
			if err := os.Chtimes(name, archiveTime, archiveTime); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeArchive(b, p, bin, []byte("license")); err != nil {
			t.Fatal(err)
		}
		x, _ := os.ReadFile(a)
		y, _ := os.ReadFile(b)
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: archives differ", p)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o700); err != nil {
		t.Fatal(err)
	}
}

// TestRenderKrew renders the repository's krew.yaml template: every
// platform of the release matrix gets the uri and sha256 of its archive; a
// subset of built platforms gives a manifest of that subset.
func TestRenderKrew(t *testing.T) {
	dir := t.TempDir()
	sums := map[string]string{}
	for _, p := range allPlatforms {
		sums[archiveName("v9.9.9", p)] = strings.Repeat(p.Arch[:1], 64)
	}
	out := filepath.Join(dir, "krew.yaml")
	template := filepath.Join("..", "..", "krew.yaml")
	if err := renderKrew(template, out, "v9.9.9", allPlatforms, sums); err != nil {
		t.Fatal(err)
	}
	version, got := readManifest(t, out)
	if version != "v9.9.9" || len(got) != len(sums) {
		t.Fatalf("read back version %s, %d platforms: %v", version, len(got), got)
	}
	for archive, sum := range sums {
		if got[archive] != sum {
			t.Errorf("%s: sha256 %q, want %s", archive, got[archive], sum)
		}
	}

	subset := []platform{{"linux", "amd64"}, {"windows", "amd64"}}
	some := map[string]string{}
	for _, p := range subset {
		some[archiveName("v9.9.9", p)] = sums[archiveName("v9.9.9", p)]
	}
	if err := renderKrew(template, out, "v9.9.9", subset, some); err != nil {
		t.Fatal(err)
	}
	if _, got := readManifest(t, out); len(got) != 2 || got[archiveName("v9.9.9", subset[0])] == "" || got[archiveName("v9.9.9", subset[1])] == "" {
		t.Errorf("subset manifest: %v", got)
	}

	lacking := filepath.Join(dir, "lacking.yaml")
	writeFile(t, lacking, "apiVersion: krew.googlecontainertools.github.com/v1alpha2\nkind: Plugin\nspec:\n  version: {{ .TagName }}\n  platforms: []\n")
	if err := renderKrew(lacking, out, "v9.9.9", subset, some); err == nil || !strings.Contains(err.Error(), "has no platform for linux/amd64") {
		t.Errorf("a template without a built platform: %v", err)
	}
}

// readManifest reads the version and the archive -> sha256 of a rendered
// krew manifest.
func readManifest(t *testing.T, path string) (string, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Version   string `yaml:"version"`
			Platforms []struct {
				URI    string `yaml:"uri"`
				SHA256 string `yaml:"sha256"`
			} `yaml:"platforms"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	sums := map[string]string{}
	for _, p := range m.Spec.Platforms {
		sums[p.URI[strings.LastIndex(p.URI, "/")+1:]] = p.SHA256
	}
	return m.Spec.Version, sums
}

// TestVersionScript runs hack/version.sh in repositories of each shape:
// every version is semantic, and an untagged build says so.
func TestVersionScript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	script, err := filepath.Abs(filepath.Join("..", "version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	git := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // COMMIT stands for the short commit
	}{
		{"untagged", func(t *testing.T, dir string) {}, "v0.0.0-dev+COMMIT"},
		{"untagged and changed", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a"), "changed") }, "v0.0.0-dev+COMMIT.dirty"},
		{"tagged", func(t *testing.T, dir string) { git(t, dir, "tag", "v0.1.0") }, "v0.1.0"},
		{"tagged and changed", func(t *testing.T, dir string) {
			git(t, dir, "tag", "v0.1.0")
			writeFile(t, filepath.Join(dir, "a"), "changed")
		}, "v0.1.0+dirty"},
		{"after a tag", func(t *testing.T, dir string) {
			git(t, dir, "tag", "v0.1.9")
			writeFile(t, filepath.Join(dir, "a"), "next")
			git(t, dir, "commit", "-qam", "next")
		}, "v0.1.10-dev+COMMIT"},
		{"a tag that is not a release", func(t *testing.T, dir string) { git(t, dir, "tag", "nightly") }, "v0.0.0-dev+COMMIT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			writeFile(t, filepath.Join(dir, "a"), "a")
			git(t, dir, "add", "a")
			git(t, dir, "commit", "-qm", "first")
			c.setup(t, dir)
			cmd := exec.Command(script)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(c.want, "COMMIT", git(t, dir, "rev-parse", "--short", "HEAD"))
			got := strings.TrimSpace(string(out))
			if got != want || !semverRE.MatchString(got) {
				t.Errorf("version %q, want %q (semantic)", got, want)
			}
		})
	}
	cmd := exec.Command(script)
	cmd.Dir = t.TempDir() // not a checkout
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "v0.0.0-dev" {
		t.Errorf("outside a checkout: %q, %v", out, err)
	}
}

// TestHelmPlugin: the Helm plugin archive's name gives Helm the plugin's
// directory for every shape of version hack/version.sh prints (Helm cuts
// NAME-VERSION at the last "-DIGITS."; test/helm installs a real one), and
// its plugin.yaml is the repository's with the release's version and the
// command beside it.
func TestHelmPlugin(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(helmPluginFile)))
	if err != nil {
		t.Fatal(err)
	}
	helmCut := regexp.MustCompile(`(.*)-\d+\..*`)
	cases := []struct {
		name, version string
		p             platform
		archive       string
		command       string
	}{
		{"release", "v1.2.3", platform{"linux", "amd64"}, "kubectl-inject-1.2.3-helm-plugin-linux-amd64.tgz", "${HELM_PLUGIN_DIR}/kubectl-inject"},
		{"windows", "v1.2.3", platform{"windows", "arm64"}, "kubectl-inject-1.2.3-helm-plugin-windows-arm64.tgz", "${HELM_PLUGIN_DIR}/kubectl-inject.exe"},
		{"untagged", "v0.0.0-dev+b6a2c90", platform{"darwin", "arm64"}, "kubectl-inject-0.0.0-dev+b6a2c90-helm-plugin-darwin-arm64.tgz", "${HELM_PLUGIN_DIR}/kubectl-inject"},
		{"after a tag, changed", "v0.1.10-dev+1234567.dirty", platform{"linux", "arm64"}, "kubectl-inject-0.1.10-dev+1234567.dirty-helm-plugin-linux-arm64.tgz", "${HELM_PLUGIN_DIR}/kubectl-inject"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			archive := helmArchiveName(c.version, c.p)
			if archive != c.archive {
				t.Errorf("archive %s, want %s", archive, c.archive)
			}
			if dir := helmCut.ReplaceAllString(strings.TrimSuffix(archive, ".tgz"), "$1"); dir != helmPluginName {
				t.Errorf("Helm installs %s into %q, want %q", archive, dir, helmPluginName)
			}
			out, err := helmPluginYAML(src, c.version, c.p)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				APIVersion    string `yaml:"apiVersion"`
				Name          string
				Type          string
				Runtime       string
				Version       string
				RuntimeConfig struct {
					PlatformCommand []struct {
						Command string
						Args    []string
					} `yaml:"platformCommand"`
				} `yaml:"runtimeConfig"`
			}
			if err := yaml.Unmarshal(out, &m); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			cmds := m.RuntimeConfig.PlatformCommand
			if m.APIVersion != "v1" || m.Name != helmPluginName || m.Type != "postrenderer/v1" || m.Runtime != "subprocess" ||
				m.Version != strings.TrimPrefix(c.version, "v") || len(cmds) != 1 || cmds[0].Command != c.command ||
				strings.Join(cmds[0].Args, " ") != "--local -f -" {
				t.Errorf("plugin.yaml:\n%s", out)
			}
			if !bytes.HasPrefix(out, src[:bytes.Index(src, []byte("\napiVersion:"))]) {
				t.Errorf("plugin.yaml lost the repository's comments:\n%s", out)
			}
		})
	}
	if _, err := helmPluginYAML([]byte("apiVersion: v1\nname: other\n"), "v1.2.3", platform{"linux", "amd64"}); err == nil || !strings.Contains(err.Error(), `name is "other"`) {
		t.Errorf("another name: %v", err)
	}
	if _, err := helmPluginYAML([]byte("apiVersion: v1\nname: kubectl-inject\n"), "v1.2.3", platform{"linux", "amd64"}); err == nil || !strings.Contains(err.Error(), "platformCommand must hold one command") {
		t.Errorf("no command: %v", err)
	}
}
