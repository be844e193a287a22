package main

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"text/template"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// missingSHA stands for the sha256 of an archive that was not built (a
// -platforms subset); renderKrew drops the platforms that hold it.
const missingSHA = "not-built"

// renderKrew renders the krew manifest template (krew.yaml, in
// krew-release-bot's syntax) for version, with the sha256 of the archives
// in sums (archive name -> sha256), into outPath. Platforms whose archive
// was not built are left out; every built platform must be in the
// template.
func renderKrew(tmplPath, outPath, version string, platforms []platform, sums map[string]string) error {
	src, err := os.ReadFile(tmplPath)
	if err != nil {
		return err
	}
	referenced := map[string]bool{}
	addURIAndSha := func(uriTemplate, tag string) (string, error) {
		t, err := template.New("uri").Option("missingkey=error").Parse(uriTemplate)
		if err != nil {
			return "", err
		}
		var uri bytes.Buffer
		if err := t.Execute(&uri, struct{ TagName string }{tag}); err != nil {
			return "", err
		}
		archive := path.Base(uri.String())
		referenced[archive] = true
		sum, ok := sums[archive]
		if !ok {
			sum = missingSHA
		}
		// krew-release-bot's output, indented for a platform item.
		return fmt.Sprintf("uri: %s\n    sha256: %s", uri.String(), sum), nil
	}
	t, err := template.New(path.Base(tmplPath)).Option("missingkey=error").
		Funcs(template.FuncMap{"addURIAndSha": addURIAndSha}).Parse(string(src))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct{ TagName string }{version}); err != nil {
		return fmt.Errorf("%s: %w", tmplPath, err)
	}
	for _, p := range platforms {
		if a := archiveName(version, p); !referenced[a] {
			return fmt.Errorf("%s has no platform for %s (no addURIAndSha of %s)", tmplPath, p, a)
		}
	}
	out := buf.Bytes()
	if bytes.Contains(out, []byte(missingSHA)) {
		if out, err = dropUnbuilt(out); err != nil {
			return err
		}
	}
	return writeFileAtomic(outPath, out, 0o644)
}

// dropUnbuilt removes the platforms whose archive was not built.
func dropUnbuilt(manifest []byte) ([]byte, error) {
	m, err := yaml.Parse(string(manifest))
	if err != nil {
		return nil, fmt.Errorf("rendered krew manifest: %w", err)
	}
	platforms, err := m.Pipe(yaml.Lookup("spec", "platforms"))
	if err != nil || platforms == nil {
		return nil, fmt.Errorf("rendered krew manifest has no spec.platforms: %v", err)
	}
	var kept []*yaml.Node
	for _, p := range platforms.YNode().Content {
		if sum := yaml.NewRNode(p).Field("sha256"); sum == nil || yaml.GetValue(sum.Value) != missingSHA {
			kept = append(kept, p)
		}
	}
	platforms.YNode().Content = kept
	s, err := m.String()
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}
