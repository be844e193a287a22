package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// helmPluginName is the plugin's name in plugin.yaml and the directory at
// the root of its archive: Helm installs an archive into the directory its
// file name gives once the version is cut off (NAME-VERSION...tgz), and
// looks for plugin.yaml there.
const helmPluginName = "kubectl-inject"

// helmPluginFile is the Helm 4 plugin of the repository, relative to the
// module root. Installed from a checkout it runs kubectl-inject from PATH;
// the archives hold a copy that runs the binaries beside it.
const helmPluginFile = "plugin/helm/plugin.yaml"

// helmArchiveName is the Helm 4 post-renderer plugin archive of version v
// for p: a .tgz on every platform, the one format `helm plugin install`
// reads, named NAME-VERSION-... so that Helm finds its directory. The
// version loses its "v": Helm cuts the name off at "-DIGITS.".
func helmArchiveName(v string, p platform) string {
	return fmt.Sprintf("%s-%s-helm-plugin-%s-%s.tgz", helmPluginName, strings.TrimPrefix(v, "v"), p.OS, p.Arch)
}

// helmPluginYAML returns the plugin.yaml of the archive of version for p:
// the repository's, with the release's version (semver without "v", as
// Helm wants it) and the command run from the plugin's directory.
func helmPluginYAML(src []byte, version string, p platform) ([]byte, error) {
	node, err := yaml.Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", helmPluginFile, err)
	}
	if name := yaml.GetValue(node.Field("name").Value); name != helmPluginName {
		return nil, fmt.Errorf("%s: name is %q, want %q (the archive's directory)", helmPluginFile, name, helmPluginName)
	}
	if err := node.PipeE(yaml.SetField("version", yaml.NewStringRNode(strings.TrimPrefix(version, "v")))); err != nil {
		return nil, fmt.Errorf("%s: setting version: %w", helmPluginFile, err)
	}
	commands, err := node.Pipe(yaml.Lookup("runtimeConfig", "platformCommand"))
	if err != nil || commands == nil || len(commands.Content()) != 1 {
		return nil, fmt.Errorf("%s: runtimeConfig.platformCommand must hold one command", helmPluginFile)
	}
	command := "${HELM_PLUGIN_DIR}/" + pluginName + p.exe()
	if err := yaml.NewRNode(commands.Content()[0]).PipeE(yaml.SetField("command", yaml.NewStringRNode(command))); err != nil {
		return nil, fmt.Errorf("%s: setting the command: %w", helmPluginFile, err)
	}
	out, err := node.String()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", helmPluginFile, err)
	}
	return []byte(out), nil
}

// writeHelmPlugin writes the Helm plugin archive for p: plugin.yaml, the
// plugin's binaries in binDir and the license, under the plugin's
// directory, with the fixed metadata of every archive.
func writeHelmPlugin(path string, p platform, binDir string, pluginYAML, license []byte) error {
	entries := []entry{
		{helmPluginName + "/LICENSE", 0o644, license},
		{helmPluginName + "/plugin.yaml", 0o644, pluginYAML},
	}
	for _, name := range pluginBinaries(p) {
		b, err := os.ReadFile(filepath.Join(binDir, name))
		if err != nil {
			return err
		}
		entries = append(entries, entry{helmPluginName + "/" + name, 0o755, b})
	}
	return writeTarGzFile(path, entries)
}
