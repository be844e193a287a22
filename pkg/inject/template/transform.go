package template

import (
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Templates derived from a template by settings (native or classic
// sidecars, an image) and by an object's parameter values. Each returns a
// new template and leaves the one it was given as it was: the nodes a
// change touches are copied.

// WithNative returns a copy of the template with its sidecars moved to native
// form (init containers with restartPolicy: Always) or, when native is false,
// to classic containers. Init containers that are not sidecars stay. The
// parameters' defaults are read again from the moved sidecars, as WithImage
// does, so that a default is always the value its field holds.
func (t *Template) WithNative(native bool) *Template {
	out := t.withNative(native)
	if len(out.Parameters) > 0 {
		out.resolveDefaults()
	}
	return out
}

func (t *Template) withNative(native bool) *Template {
	out := &Template{Labels: t.Labels, Annotations: t.Annotations, Volumes: t.Volumes, Parameters: t.Parameters,
		ReservedPorts: t.ReservedPorts, ports: t.ports, Source: t.Source}
	if native {
		out.InitContainers = append(out.InitContainers, t.InitContainers...)
		for _, c := range t.Containers {
			c = yamltext.Copy(c)
			nodes.SetScalarField(c, "restartPolicy", "Always")
			out.InitContainers = append(out.InitContainers, c)
		}
		return out
	}
	out.Containers = append(out.Containers, t.Containers...)
	for _, c := range t.InitContainers {
		if nodes.ScalarField(c, "restartPolicy") != "Always" {
			out.InitContainers = append(out.InitContainers, c)
			continue
		}
		c = yamltext.Copy(c)
		nodes.DeleteField(c, "restartPolicy")
		out.Containers = append(out.Containers, c)
	}
	return out
}

// WithImage returns a copy whose first sidecar uses image, the
// parameters' defaults read again from it (a parameter may set the image).
func (t *Template) WithImage(image string) *Template {
	out := *t
	switch {
	case len(t.Containers) > 0:
		out.Containers = append([]*yaml.Node{}, t.Containers...)
		out.Containers[0] = yamltext.Copy(t.Containers[0])
		nodes.SetScalarField(out.Containers[0], "image", image)
	case len(t.InitContainers) > 0:
		i := 0
		for j, c := range t.InitContainers {
			if nodes.ScalarField(c, "restartPolicy") == "Always" {
				i = j
				break
			}
		}
		out.InitContainers = append([]*yaml.Node{}, t.InitContainers...)
		out.InitContainers[i] = yamltext.Copy(t.InitContainers[i])
		nodes.SetScalarField(out.InitContainers[i], "image", image)
	}
	if len(out.Parameters) > 0 {
		out.resolveDefaults()
	}
	return &out
}

// WithValues returns the template with the override values set. Only the
// items a value changes are copied.
func (t *Template) WithValues(values map[string]string) *Template {
	if len(values) == 0 {
		return t
	}
	out := *t
	out.Containers = append([]*yaml.Node(nil), t.Containers...)
	out.InitContainers = append([]*yaml.Node(nil), t.InitContainers...)
	out.Volumes = append([]*yaml.Node(nil), t.Volumes...)
	copied := map[*yaml.Node]bool{}
	for _, p := range t.Parameters {
		v, ok := values[p.Annotation]
		if !ok {
			continue
		}
		lists := [][]*yaml.Node{out.Containers, out.InitContainers}
		if p.path.list == "volumes" {
			lists = [][]*yaml.Node{out.Volumes}
		}
		for _, list := range lists { // share their arrays with out
			for i, item := range list {
				if nodes.ScalarField(item, "name") != p.path.item {
					continue
				}
				if !copied[item] {
					list[i] = yamltext.Copy(item)
					copied[list[i]] = true
				}
				// Checked when the template was loaded.
				_ = setPath(list[i], p.path.steps, v, p.Type)
			}
		}
	}
	return &out
}
