package admission

import (
	"fmt"
	"path"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// StaticSuffix ends the name of every object an API server loads from
// static admission manifests (staticManifestsDir, Kubernetes 1.37+): the
// API reserves it, so no client can create, change or delete such an
// object.
const StaticSuffix = ".static.k8s.io"

// The directories of a static policy, one per admission plugin: each
// plugin reads its own staticManifestsDir, and a file of the other
// plugin's kinds stops the API server.
const (
	StaticMutatingDir   = "mutating"
	StaticValidatingDir = "validating"
)

// CompileStatic is Compile for static admission manifests: the objects
// are named kinject-NAME.static.k8s.io and kinject-NAME-conflicts.static.k8s.io,
// and a template that needs an object of the Pod's namespace is refused,
// because a static policy takes no parameter (paramKind, paramRef) to
// check that the object exists.
func CompileStatic(in *inject.Injector, name string) (*Policy, error) {
	return compile(in, name, true)
}

func staticGateError(gate *template.Reference) error {
	return fmt.Errorf("the template needs %s in each Pod's namespace (%s): a static policy cannot check that it exists, because static manifests take no paramKind or paramRef; "+
		"install this template's policy through the API (kubectl inject policy --apply), or make the template need no object of the Pod's namespace", gate, gate.Field)
}

// StaticFile is one file of a static policy: one object.
type StaticFile struct {
	// Path is relative to the static directory, with / separators:
	// mutating/kinject-NAME.policy.yaml, mutating/kinject-NAME.binding.yaml,
	// and the same under validating/ for kinject-NAME-conflicts.
	Path string
	// Name and Kind are the object's.
	Name, Kind string
	Data       []byte
}

// StaticFiles renders a policy compiled by CompileStatic as files, one
// object per file, each headed by a comment saying what it is and how it
// is checked.
func (p *Policy) StaticFiles() ([]StaticFile, error) {
	if !p.Static {
		return nil, fmt.Errorf("policy %s was not compiled for static manifests", p.Name)
	}
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	files := make([]StaticFile, len(objs))
	for i, o := range objs {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(o, &meta); err != nil {
			return nil, err
		}
		y, err := yaml.JSONToYAML(o)
		if err != nil {
			return nil, fmt.Errorf("encoding the policy: %w", err)
		}
		// Written as kyaml writes it (long lines unwrapped), so that the
		// function's static output, which kpt and kustomize write with
		// kyaml, is these files byte for byte.
		node, err := kyaml.Parse(string(y))
		if err != nil {
			return nil, fmt.Errorf("encoding the policy: %w", err)
		}
		text, err := node.String()
		if err != nil {
			return nil, fmt.Errorf("encoding the policy: %w", err)
		}
		dir, role := StaticMutatingDir, "policy"
		if meta.Kind == KindValidatingPolicy || meta.Kind == KindValidatingPolicyBinding {
			dir = StaticValidatingDir
		}
		if strings.HasSuffix(meta.Kind, "Binding") {
			role = "binding"
		}
		base := strings.TrimSuffix(meta.Metadata.Name, StaticSuffix)
		header := fmt.Sprintf("# %s %s, loaded by the API server from this directory (staticManifestsDir).\n"+
			"# Written by kubectl inject policy --static; kubectl inject policy --static DIR --check tells whether it is current.\n",
			meta.Kind, meta.Metadata.Name)
		files[i] = StaticFile{
			Path: path.Join(dir, base+"."+role+".yaml"),
			Name: meta.Metadata.Name, Kind: meta.Kind,
			Data: []byte(header + text),
		}
	}
	return files, nil
}

// StaticConfiguration is the AdmissionConfiguration that makes an API
// server load the static policy in dir (an absolute path): the file
// given to kube-apiserver --admission-control-config-file, or the
// stanzas to add to it.
func StaticConfiguration(dir string) []byte {
	plugin := func(name, kind, sub string) string {
		return fmt.Sprintf("- name: %s\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: %s\n    staticManifestsDir: %s\n",
			name, kind, path.Join(dir, sub))
	}
	return []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n" +
		plugin("MutatingAdmissionPolicy", "MutatingAdmissionPolicyConfiguration", StaticMutatingDir) +
		plugin("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyConfiguration", StaticValidatingDir))
}
