package template

import (
	"sort"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kinds of the objects a pod spec can reference by name in its namespace.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
	KindPVC       = "PersistentVolumeClaim"
)

// Reference is an object of the Pod's namespace that an injected part needs
// before the Pod can start: the kubelet waits for a missing ConfigMap,
// Secret or PersistentVolumeClaim, and the Pod never runs.
type Reference struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Field is where the reference is, in the template's terms
	// ("volumes[envoy-conf].configMap.name").
	Field string `json:"field"`
}

// String names the object as kubectl does: "configmap/envoy".
func (r Reference) String() string {
	switch r.Kind {
	case KindPVC:
		return "persistentvolumeclaim/" + r.Name
	case KindSecret:
		return "secret/" + r.Name
	}
	return "configmap/" + r.Name
}

// References lists the objects the template's parts need that are not
// marked optional: volumes (configMap, secret, persistentVolumeClaim and
// the sources of projected volumes), and the containers' and init
// containers' envFrom and env[].valueFrom. Templates add no
// imagePullSecrets, so none are listed. The list is sorted by kind and
// name, one entry per object (its first field).
func (t *Template) References() []Reference {
	return ReferencesOf(t.Containers, t.InitContainers, t.Volumes)
}

// ReferencesOf lists, as References does, what the given items need.
func ReferencesOf(containers, initContainers, volumes []*yaml.Node) []Reference {
	var refs []Reference
	add := func(kind, name, field string) {
		if name != "" {
			refs = append(refs, Reference{Kind: kind, Name: name, Field: field})
		}
	}
	for _, l := range []struct {
		field string
		items []*yaml.Node
	}{{"containers", containers}, {"initContainers", initContainers}} {
		for _, c := range l.items {
			containerReferences(c, l.field+"["+nodes.ScalarField(c, "name")+"]", add)
		}
	}
	for _, v := range volumes {
		volumeReferences(v, "volumes["+nodes.ScalarField(v, "name")+"]", add)
	}
	sort.SliceStable(refs, func(i, j int) bool {
		if refs[i].Kind != refs[j].Kind {
			return refs[i].Kind < refs[j].Kind
		}
		return refs[i].Name < refs[j].Name
	})
	out := refs[:0]
	for i, r := range refs {
		if i == 0 || r.Kind != refs[i-1].Kind || r.Name != refs[i-1].Name {
			out = append(out, r)
		}
	}
	return out
}

type addReference func(kind, name, field string)

// required returns the name field of a reference, or "" when the
// reference is optional: true.
func required(ref *yaml.Node, nameField string) string {
	if ref == nil || nodes.ScalarField(ref, "optional") == "true" {
		return ""
	}
	return nodes.ScalarField(ref, nameField)
}

func containerReferences(c *yaml.Node, at string, add addReference) {
	for i, from := range nodes.SeqItems(nodes.MapValue(c, "envFrom")) {
		field := at + ".envFrom[" + strconv.Itoa(i) + "]"
		add(KindConfigMap, required(nodes.MapValue(from, "configMapRef"), "name"), field+".configMapRef.name")
		add(KindSecret, required(nodes.MapValue(from, "secretRef"), "name"), field+".secretRef.name")
	}
	for _, env := range nodes.SeqItems(nodes.MapValue(c, "env")) {
		from := nodes.MapValue(env, "valueFrom")
		field := at + ".env[" + nodes.ScalarField(env, "name") + "].valueFrom"
		add(KindConfigMap, required(nodes.MapValue(from, "configMapKeyRef"), "name"), field+".configMapKeyRef.name")
		add(KindSecret, required(nodes.MapValue(from, "secretKeyRef"), "name"), field+".secretKeyRef.name")
	}
}

func volumeReferences(v *yaml.Node, at string, add addReference) {
	add(KindConfigMap, required(nodes.MapValue(v, "configMap"), "name"), at+".configMap.name")
	add(KindSecret, required(nodes.MapValue(v, "secret"), "secretName"), at+".secret.secretName")
	add(KindPVC, nodes.ScalarField(nodes.MapValue(v, "persistentVolumeClaim"), "claimName"), at+".persistentVolumeClaim.claimName")
	for i, src := range nodes.SeqItems(nodes.MapValue(nodes.MapValue(v, "projected"), "sources")) {
		field := at + ".projected.sources[" + strconv.Itoa(i) + "]"
		add(KindConfigMap, required(nodes.MapValue(src, "configMap"), "name"), field+".configMap.name")
		add(KindSecret, required(nodes.MapValue(src, "secret"), "name"), field+".secret.name")
	}
}
