package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// DefaultRetries is how many times a change is attempted when the object
// keeps changing between read and write.
const DefaultRetries = 5

// Patcher injects (or uninjects) live objects. Its fields are read-only
// during Process, so one Patcher serves many goroutines.
type Patcher struct {
	Injector *inject.Injector
	Op       inject.Op
	Client   dynamic.Interface
	Mapper   meta.RESTMapper
	DryRun   dryrun.Strategy
	// ServerSide sends a server-side apply of only the injected fields
	// (built-in kinds; custom kinds get a merge patch, see doc.go).
	ServerSide     bool
	ForceConflicts bool
	FieldManager   string
	// Recreate allows deleting a bare Pod and creating it again.
	Recreate bool
	// References, when set, refuses an injection whose sidecar needs a
	// ConfigMap, Secret or PersistentVolumeClaim the object's namespace
	// lacks (inject.ReasonMissingReference): nothing is sent for it. A client
	// dry run does not look.
	References *ReferenceChecker
	// Retries bounds the attempts on Conflict (DefaultRetries when 0).
	Retries int
	// RecreateTimeout bounds the wait for a deleted Pod to go away
	// (two minutes when 0).
	RecreateTimeout time.Duration
}

// Target is one object to process.
type Target struct {
	Mapping   *meta.RESTMapping
	Namespace string
	Name      string
	// Object, when set, is a fresh read of the object from the server and
	// saves the first GET.
	Object *unstructured.Unstructured
}

// Process injects one target and reports the outcome. It never panics on
// API errors; they become a Result with Action inject.Failed.
func (p *Patcher) Process(ctx context.Context, t Target) Result {
	res := Result{Ref: Ref(t.Mapping.GroupVersionKind, t.Name), Namespace: t.Namespace}
	mapping, obj := t.Mapping, t.Object
	if obj == nil {
		var err error
		if obj, err = p.get(ctx, mapping, t.Namespace, t.Name); err != nil {
			return fail(res, "", err)
		}
	}
	if followsOwner(mapping.GroupVersionKind) {
		owner, err := p.owner(ctx, mapping, obj)
		if err != nil {
			return fail(res, inject.ReasonOwnerNotFound, err)
		}
		if owner.obj != nil {
			res.Via = strings.Join(owner.chain, " via ")
			res.Ref = Ref(owner.mapping.GroupVersionKind, owner.obj.GetName())
			mapping, obj = owner.mapping, owner.obj
		}
	}
	retries := p.Retries
	if retries <= 0 {
		retries = DefaultRetries
	}
	// A Conflict means the object changed since it was read: read it again
	// and compute the change anew, at once (the steps have no delay).
	var out Result
	attempts := 0
	err := retry.RetryOnConflict(wait.Backoff{Steps: retries}, func() (err error) {
		if attempts++; attempts > 1 {
			if obj, err = p.get(ctx, mapping, obj.GetNamespace(), obj.GetName()); err != nil {
				return err
			}
		}
		out, err = p.attempt(ctx, mapping, obj, res)
		return err
	})
	if apierrors.IsConflict(err) {
		err = fmt.Errorf("gave up after %d attempts, the object keeps changing: %w", attempts, err)
	}
	if err != nil {
		return fail(out, "", err)
	}
	return out
}

// attempt runs the core on obj and sends the change. An error is an API
// error (a Conflict is retried by the caller); other failures are returned
// in the Result.
func (p *Patcher) attempt(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured, res Result) (Result, error) {
	res.Warnings = nil
	ch, err := p.compute(obj)
	if err != nil {
		return fail(res, inject.ReasonInvalidObject, err), nil
	}
	res.Action, res.Reason, res.Message = ch.entry.Action, ch.entry.Reason, ch.entry.Message
	if res.Action == inject.Failed {
		res.Err = errors.New(ch.entry.Message)
		return res, nil
	}
	res.Object, res.Before = obj, obj
	if !res.Changed() {
		return res, nil
	}
	gvk := m.GroupVersionKind
	if gvk.Group == "batch" && gvk.Kind == "Job" {
		return fail(res, inject.ReasonImmutableTemplate, fmt.Errorf("a Job's pod template cannot be changed after the Job is created; "+
			"inject its manifest with --local and create the Job again, or inject the CronJob that creates it")), nil
	}
	isBarePod := gvk.Group == "" && gvk.Kind == "Pod"
	if isBarePod && !p.Recreate {
		return fail(res, inject.ReasonBarePod, fmt.Errorf("containers cannot be added to or removed from an existing Pod "+
			"(a Pod's containers are fixed once it is created) and this Pod has no controller to inject instead; "+
			"inject the manifest that creates it, or pass --recreate to delete the Pod and create it again with the change")), nil
	}
	modified, err := ch.object()
	if err != nil {
		return fail(res, inject.ReasonInvalidObject, err), nil
	}
	res.Object = modified
	if p.DryRun == dryrun.Client {
		res.DryRun = dryrun.Client
		return res, nil
	}
	if out, ok := p.checkReferences(ctx, obj.GetNamespace(), ch.node, res); !ok {
		return out, nil
	}
	if isBarePod {
		return p.recreate(ctx, m, obj, modified, res)
	}
	return p.send(ctx, m, obj, ch, res)
}

// send writes the change with PATCH (or server-side apply).
func (p *Patcher) send(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured, ch *change, res Result) (Result, error) {
	ri := p.Client.Resource(m.Resource).Namespace(obj.GetNamespace())
	opts := metav1.PatchOptions{FieldManager: p.FieldManager}
	if p.DryRun == dryrun.Server {
		opts.DryRun = []string{metav1.DryRunAll}
		res.DryRun = dryrun.Server
	}
	if p.ServerSide && builtin(m.GroupVersionKind) {
		out, err := p.apply(ctx, ri, obj, ch, opts)
		res.Requests++
		if err != nil {
			return res, fmt.Errorf("server-side apply: %w", err)
		}
		if !p.Op.Uninjects() || !stillInjected(p.Op, p.Injector, out) {
			res.Object = out
			return res, nil
		}
		// The injected fields belong to another manager (an earlier
		// client-side injection): remove them with a patch on the result.
		if ch, err = p.compute(out); err != nil {
			return fail(res, inject.ReasonInvalidObject, err), nil
		}
		obj = out
	} else if p.ServerSide {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: server-side apply is not used for custom kinds (their schema may treat "+
			"containers as one atomic list); sending a resourceVersion-guarded merge patch instead", res.Ref))
	}
	pt, data, err := ch.patch(m.GroupVersionKind, obj.GetResourceVersion())
	if err != nil {
		return fail(res, inject.ReasonInvalidObject, err), nil
	}
	out, err := ri.Patch(ctx, obj.GetName(), pt, data, opts)
	res.Requests++
	if err != nil {
		return res, fmt.Errorf("patch: %w", err)
	}
	res.Object = out
	return res, nil
}

func (p *Patcher) get(ctx context.Context, m *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error) {
	obj, err := p.Client.Resource(m.Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	return obj, nil
}

// fail turns err into a failed result, with a reason taken from the API
// error when there is one.
func fail(res Result, reason inject.Reason, err error) Result {
	res.Action = inject.Failed
	res.Err = err
	res.Object = nil
	res.Reason = reason
	if reason == "" {
		res.Reason = apiReason(err)
	}
	res.Message = err.Error()
	return res
}

// apiReason converts an API status reason ("Forbidden", "NotFound") to the
// report's snake_case ("forbidden", "not_found").
func apiReason(err error) inject.Reason {
	r := string(apierrors.ReasonForError(err))
	if r == "" || r == string(metav1.StatusReasonUnknown) {
		return "api_error"
	}
	var b strings.Builder
	for i, c := range r {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return inject.Reason(b.String())
}

// Ref names an object as kubectl prints it: "deployment.apps/web", "pod/x".
func Ref(gvk schema.GroupVersionKind, name string) string {
	kind := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	return kind + "/" + name
}
