package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readManifest reads the version and archive -> sha256 of a krew manifest.
func readManifest(path string) (string, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
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
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Spec.Version == "" {
		return "", nil, fmt.Errorf("%s: no spec.version", path)
	}
	sums := map[string]string{}
	for _, p := range m.Spec.Platforms {
		sums[p.URI[strings.LastIndex(p.URI, "/")+1:]] = p.SHA256
	}
	return m.Spec.Version, sums, nil
}

// manifestPlatform is one spec.platforms item of the template.
type manifestPlatform struct {
	OS, Arch, Archive, URI, SHA256, Bin, Live string
}

// renderKrew renders the template for the given platforms, whose archives
// must all have a sha256 in sums.
func renderKrew(tmplPath, outPath, version string, platforms []platform, sums map[string]string) error {
	src, err := os.ReadFile(tmplPath)
	if err != nil {
		return err
	}
	t, err := template.New(filepath.Base(tmplPath)).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return err
	}
	data := struct {
		Version   string
		Platforms []manifestPlatform
	}{Version: version}
	for _, p := range platforms {
		a := archiveName(version, p)
		sum, ok := sums[a]
		if !ok {
			return fmt.Errorf("no sha256 for %s (build it first, or pass -platforms)", a)
		}
		data.Platforms = append(data.Platforms, manifestPlatform{
			OS: p.OS, Arch: p.Arch, Archive: a,
			URI:    releaseURL + "/" + version + "/" + a,
			SHA256: sum,
			Bin:    pluginName + p.exe(),
			Live:   liveName + p.exe(),
		})
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return err
	}
	if outPath == "-" {
		_, err := os.Stdout.Write(buf.Bytes())
		return err
	}
	return writeFileAtomic(outPath, buf.Bytes(), 0o644)
}
