package live

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxOwnerDepth bounds the walk up ownerReferences (Pod -> ReplicaSet ->
// Deployment needs two steps).
const maxOwnerDepth = 4

// followsOwner reports whether objects of this kind are usually created by a
// controller whose template is the right place to inject.
func followsOwner(gvk schema.GroupVersionKind) bool {
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "Pod"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"},
		schema.GroupKind{Group: "batch", Kind: "Job"}:
		return true
	}
	return false
}

// ownerChain is the result of following controller references.
type ownerChain struct {
	mapping *meta.RESTMapping
	obj     *unstructured.Unstructured // nil when obj has no controller
	chain   []string                   // refs from the start to the last intermediate
}

// owner follows the controller ownerReferences of obj to the top-most
// controller in the same namespace.
func (p *Patcher) owner(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured) (ownerChain, error) {
	out := ownerChain{chain: []string{Ref(m.GroupVersionKind, obj.GetName())}}
	cur := obj
	for range maxOwnerDepth {
		ref := controllerOf(cur)
		if ref == nil {
			break
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return out, fmt.Errorf("%s has an invalid owner apiVersion %q: %w", out.last(), ref.APIVersion, err)
		}
		gvk := gv.WithKind(ref.Kind)
		om, err := p.Mapper.RESTMapping(gvk.GroupKind(), gv.Version)
		if err != nil {
			return out, fmt.Errorf("%s is owned by %s, an unknown kind: %w", out.last(), Ref(gvk, ref.Name), err)
		}
		owner, err := p.get(ctx, om, obj.GetNamespace(), ref.Name)
		if err != nil {
			return out, fmt.Errorf("%s is owned by %s: %w", out.last(), Ref(gvk, ref.Name), err)
		}
		if owner.GetUID() != ref.UID {
			return out, fmt.Errorf("%s is owned by %s with uid %s, but that name now has uid %s (being replaced?)",
				out.last(), Ref(gvk, ref.Name), ref.UID, owner.GetUID())
		}
		if out.obj != nil {
			out.chain = append(out.chain, Ref(out.mapping.GroupVersionKind, out.obj.GetName()))
		}
		out.mapping, out.obj, cur = om, owner, owner
	}
	return out, nil
}

func (o ownerChain) last() string {
	if o.obj != nil {
		return Ref(o.mapping.GroupVersionKind, o.obj.GetName())
	}
	return o.chain[len(o.chain)-1]
}

func controllerOf(obj *unstructured.Unstructured) *metav1.OwnerReference {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return &r
		}
	}
	return nil
}
