package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// referenceResources maps a referenced kind to its resource.
var referenceResources = map[string]schema.GroupVersionResource{
	template.KindConfigMap: {Version: "v1", Resource: "configmaps"},
	template.KindSecret:    {Version: "v1", Resource: "secrets"},
	template.KindPVC:       {Version: "v1", Resource: "persistentvolumeclaims"},
}

// ReferenceChecker tells which references a namespace lacks. It remembers
// each answer for its lifetime (one command), so a thousand Deployments
// of one namespace cost one GET per referenced object. It is safe for
// concurrent use.
type ReferenceChecker struct {
	Client dynamic.Interface
	seen   sync.Map // namespace/kind/name -> *lookup
}

// lookup is one GET, made once however many workers ask at the same time.
type lookup struct {
	once sync.Once
	err  error // nil: the object exists
}

// Missing returns the references that do not exist in namespace, and an
// error when one cannot be looked up (a 403 on Secrets): then it is not
// known whether the Pods can start.
func (c *ReferenceChecker) Missing(ctx context.Context, namespace string, refs []template.Reference) ([]template.Reference, error) {
	var missing []template.Reference
	var errs []error
	for _, r := range refs {
		v, _ := c.seen.LoadOrStore(namespace+"/"+r.Kind+"/"+r.Name, &lookup{})
		l := v.(*lookup)
		l.once.Do(func() {
			_, l.err = c.Client.Resource(referenceResources[r.Kind]).Namespace(namespace).Get(ctx, r.Name, metav1.GetOptions{})
		})
		switch err := l.err; {
		case err == nil:
		case apierrors.IsNotFound(err):
			missing = append(missing, r)
		default:
			errs = append(errs, fmt.Errorf("cannot tell whether %s exists in namespace %q (the sidecar's %s): %w", r, namespace, r.Field, err))
		}
	}
	return missing, errors.Join(errs...)
}

// MissingError describes missing references for one namespace.
func MissingError(namespace string, missing []template.Reference) error {
	parts := make([]string, len(missing))
	for i, r := range missing {
		parts[i] = fmt.Sprintf("%s (%s)", r, r.Field)
	}
	return fmt.Errorf("the sidecar needs %s, and namespace %q has none: its Pods would never start, so nothing was sent; "+
		"create it there, or pass --allow-missing-references", strings.Join(parts, ", "), namespace)
}

// checkReferences fails res when the parts injected into node need an
// object that namespace lacks.
func (p *Patcher) checkReferences(ctx context.Context, namespace string, node *yaml.RNode, res Result) (Result, bool) {
	if p.References == nil || p.Op != inject.OpInject {
		return res, true
	}
	missing, err := p.References.Missing(ctx, namespace, p.Injector.InjectedReferences(node))
	switch {
	case err != nil:
		return fail(res, inject.ReasonMissingReference, err), false
	case len(missing) > 0:
		return fail(res, inject.ReasonMissingReference, MissingError(namespace, missing)), false
	}
	return res, true
}
