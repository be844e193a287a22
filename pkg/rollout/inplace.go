package rollout

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"

	"github.com/kinject/kubectl-inject/pkg/reason"
)

// upgradedInPlace is the annotation, beside a profile's record, that an
// upgrade in place writes: the template hash the Pod was created with.
const upgradedInPlace = "upgraded-in-place"

// UpgradedInPlaceAnnotation is the annotation that marks a Pod of profile
// whose sidecars were upgraded in place; its value is the template hash
// the Pod ran before.
func UpgradedInPlaceAnnotation(profile string) string {
	return naming.ProfileAnnotation(profile, upgradedInPlace)
}

// ImageChange is one sidecar whose image an upgrade in place changes.
type ImageChange struct {
	Container string `json:"container"`
	// Init marks a container of spec.initContainers (a native sidecar).
	Init bool   `json:"init,omitempty"`
	From string `json:"from"`
	To   string `json:"to"`
}

// ResourceChange is one sidecar whose resources an upgrade in place
// changes through the Pod's resize subresource: requests and limits of
// cpu and memory, within the Pod's QoS class.
type ResourceChange struct {
	Container string `json:"container"`
	Init      bool   `json:"init,omitempty"`
	// From and To are the container's resources (requests, limits).
	From map[string]any `json:"from,omitempty"`
	To   map[string]any `json:"to,omitempty"`
}

// Upgrade is the verdict on one Pod: upgraded in place (Reason empty)
// with the images, resources and the record it gets, or recreated for
// Reason.
type Upgrade struct {
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod"`
	// Images are the sidecars whose image changes (none when only the
	// record changes).
	Images []ImageChange `json:"images,omitempty"`
	// Resources are the sidecars whose resources are resized.
	Resources []ResourceChange `json:"resources,omitempty"`
	// RecordKey is the record's annotation; Record its new value,
	// OldRecord the one it replaces, FromTemplate the hash it held.
	RecordKey    string `json:"-"`
	Record       string `json:"-"`
	OldRecord    string `json:"-"`
	FromTemplate string `json:"fromTemplate,omitempty"`
	MarkerKey    string `json:"-"`
	// Labels are set on the Pod with the images (an OnDelete workload's
	// revision label), OldLabels what they were.
	Labels    map[string]string `json:"-"`
	OldLabels map[string]string `json:"-"`
	// Reason and Message say why the Pod is recreated instead.
	Reason  reason.Code `json:"reason,omitempty"`
	Message string      `json:"message,omitempty"`
}

// InPlace reports an upgrade that can be made in place.
func (u Upgrade) InPlace() bool { return u.Reason == "" }

// DecideUpgrade judges whether pod can be brought to what in injects now
// by changing its sidecars' images alone: the core injects a copy, and
// the Pod before and after must differ only in those images and the
// record. Fields the API server fills in on a Pod (terminationMessagePath,
// a probe's periodSeconds...) and that the template leaves out do not
// count as differences.
func DecideUpgrade(in *inject.Injector, pod *unstructured.Unstructured) Upgrade {
	u := Upgrade{Namespace: pod.GetNamespace(), Pod: pod.GetName(), RecordKey: in.StatusAnnotation(), MarkerKey: UpgradedInPlaceAnnotation(in.Profile())}
	before, after, entry, err := injectCopy(in, pod)
	if err != nil {
		u.Reason, u.Message = inject.ReasonInvalidObject, err.Error()
		return u
	}
	switch entry.Action {
	case inject.Updated:
	case inject.Unchanged:
		u.Reason, u.Message = ReasonAlreadyCurrent, "the Pod runs the current template"
		return u
	case inject.Injected:
		u.Reason, u.Message = inject.ReasonNotInjected, "the Pod has no sidecar: it gains containers only when created again"
		return u
	case inject.Skipped:
		u.Reason, u.Message = inject.ReasonNotInjected, fmt.Sprintf("not injected: %s: %s", entry.Reason, entry.Message)
		return u
	default:
		u.Reason, u.Message = inject.ReasonInvalidObject, fmt.Sprintf("%s: %s", entry.Reason, entry.Message)
		return u
	}
	u.OldRecord = pod.GetAnnotations()[u.RecordKey]
	injected, _, _ := unstructured.NestedString(after, "metadata", "annotations", u.RecordKey)
	rec, err := record.Parse(u.RecordKey, injected)
	if err != nil {
		u.Reason, u.Message = inject.ReasonInvalidObject, err.Error()
		return u
	}
	old, err := record.Parse(u.RecordKey, u.OldRecord)
	if err != nil {
		u.Reason, u.Message = inject.ReasonInvalidObject, err.Error()
		return u
	}
	// The Pod keeps what the first injection made (the fields it created,
	// those that were empty): only the template and its values change.
	u.FromTemplate = old.Template
	kept := *old
	kept.Template, kept.Values = rec.Template, rec.Values
	u.Record = kept.Encode()
	changes := &changes{}
	if field := imageOnly(before, after, u.RecordKey, u.MarkerKey, rec, changes); field != "" {
		u.Reason, u.Message = ReasonNotImageOnly, field+" changes, not only the sidecar's image and resources: a running Pod cannot take it"
		return u
	}
	u.Images, u.Resources = changes.images, changes.resources
	if len(u.Resources) > 0 {
		if why := resizeRefused(before); why != "" {
			u.Reason, u.Message = ReasonNotImageOnly, "the sidecar's resources change, and "+why
			return u
		}
		from, to := qosClass(asMap(before["spec"]), nil), qosClass(asMap(before["spec"]), u.Resources)
		if from != to {
			u.Reason, u.Message = ReasonNotImageOnly, fmt.Sprintf("the sidecar's resources change the Pod's QoS class from %s to %s, which a resize cannot", from, to)
		}
	}
	return u
}

// injectCopy returns pod and a copy the core injected, as plain maps.
func injectCopy(in *inject.Injector, pod *unstructured.Unstructured) (before, after map[string]any, entry inject.Entry, err error) {
	data, err := json.Marshal(pod.Object)
	if err != nil {
		return nil, nil, entry, fmt.Errorf("encoding Pod %s: %w", pod.GetName(), err)
	}
	node, err := yaml.ConvertJSONToYamlNode(string(data))
	if err != nil {
		return nil, nil, entry, fmt.Errorf("reading Pod %s: %w", pod.GetName(), err)
	}
	entries := in.ProcessNode(inject.OpInject, node, 0)
	if len(entries) != 1 {
		return nil, nil, entry, fmt.Errorf("injecting Pod %s: %d results for one object", pod.GetName(), len(entries))
	}
	out, err := node.MarshalJSON()
	if err != nil {
		return nil, nil, entry, fmt.Errorf("encoding injected Pod %s: %w", pod.GetName(), err)
	}
	if err := json.Unmarshal(data, &before); err != nil {
		return nil, nil, entry, fmt.Errorf("decoding Pod %s: %w", pod.GetName(), err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		return nil, nil, entry, fmt.Errorf("decoding injected Pod %s: %w", pod.GetName(), err)
	}
	return before, after, entries[0], nil
}

// changes collects what an upgrade in place changes.
type changes struct {
	images    []ImageChange
	resources []ResourceChange
}

// imageOnly compares a Pod before and after injection: it returns the
// first field that differs other than the recorded sidecars' images,
// their resizable resources and the record (and the in-place marker), ""
// when there is none, and adds the changes to ch.
func imageOnly(before, after map[string]any, recordKey, markerKey string, rec *record.Status, ch *changes) string {
	for _, key := range unionKeys(before, after) {
		switch key {
		case "status":
			continue
		case "metadata":
			if field := metadataOnly(before[key], after[key], recordKey, markerKey); field != "" {
				return field
			}
		case "spec":
			if field := specOnly(before[key], after[key], rec, ch); field != "" {
				return field
			}
		default:
			if !reflect.DeepEqual(before[key], after[key]) {
				return key
			}
		}
	}
	return ""
}

func metadataOnly(b, a any, recordKey, markerKey string) string {
	bm, am := asMap(b), asMap(a)
	for _, key := range unionKeys(bm, am) {
		if key != "annotations" {
			if !reflect.DeepEqual(bm[key], am[key]) {
				return "metadata." + key
			}
			continue
		}
		ba, aa := asMap(bm[key]), asMap(am[key])
		for _, k := range unionKeys(ba, aa) {
			if k != recordKey && k != markerKey && !reflect.DeepEqual(ba[k], aa[k]) {
				return "metadata.annotations." + k
			}
		}
	}
	return ""
}

func specOnly(b, a any, rec *record.Status, ch *changes) string {
	bm, am := asMap(b), asMap(a)
	for _, key := range unionKeys(bm, am) {
		var sidecars []string
		switch key {
		case "containers":
			sidecars = rec.Containers
		case "initContainers":
			sidecars = rec.InitContainers
		default:
			if !covers(bm[key], am[key]) {
				return "spec." + key
			}
			continue
		}
		if field := containersOnly(key, asList(bm[key]), asList(am[key]), sidecars, ch); field != "" {
			return field
		}
	}
	return ""
}

// containersOnly compares a container list: the same names in the same
// order, each the same but for a sidecar's image and resizable resources.
func containersOnly(field string, b, a []any, sidecars []string, ch *changes) string {
	if len(b) != len(a) {
		return "spec." + field
	}
	for i := range b {
		bc, ac := withoutTokenMounts(asMap(b[i]), asMap(a[i])), asMap(a[i])
		name, _ := bc["name"].(string)
		where := fmt.Sprintf("spec.%s[%s]", field, name)
		if ac["name"] != name {
			return "spec." + field
		}
		from, _ := bc["image"].(string)
		to, _ := ac["image"].(string)
		if from != to {
			if !slices.Contains(sidecars, name) {
				return where + ".image"
			}
			ch.images = append(ch.images, ImageChange{Container: name, Init: field == "initContainers", From: from, To: to})
		}
		rest := maps.Clone(ac)
		rest["image"] = from
		if !coversKey("resources", bc["resources"], ac["resources"]) && slices.Contains(sidecars, name) {
			if what := resizable(asMap(bc["resources"]), asMap(ac["resources"])); what != "" {
				return where + ".resources." + what
			}
			ch.resources = append(ch.resources, ResourceChange{Container: name, Init: field == "initContainers", From: canonicalResources(asMap(bc["resources"])), To: canonicalResources(asMap(ac["resources"]))})
			rest["resources"] = bc["resources"]
		}
		for _, key := range unionKeys(bc, rest) {
			if !coversKey(key, bc[key], rest[key]) {
				return where + "." + key
			}
		}
	}
	return ""
}

// tokenVolumePrefix starts the name of the service account token volume
// the API server mounts in every container of a Pod it admits.
const tokenVolumePrefix = "kube-api-access-"

// withoutTokenMounts returns a copy of the Pod's container b without the
// service account token mounts the API server added, unless its injected
// copy a holds them too.
func withoutTokenMounts(b, a map[string]any) map[string]any {
	mounts := asList(b["volumeMounts"])
	kept := make([]any, 0, len(mounts))
	for _, m := range mounts {
		name, _ := asMap(m)["name"].(string)
		if strings.HasPrefix(name, tokenVolumePrefix) && !hasNamed(asList(a["volumeMounts"]), name) {
			continue
		}
		kept = append(kept, m)
	}
	if len(kept) == len(mounts) {
		return b
	}
	out := maps.Clone(b)
	delete(out, "volumeMounts")
	if len(kept) > 0 {
		out["volumeMounts"] = kept
	}
	return out
}

// serverDefaults are the fields the API server fills in on a Pod when a
// manifest leaves them out: a field only the Pod holds is not a change.
var serverDefaults = map[string]bool{
	"terminationMessagePath": true, "terminationMessagePolicy": true, "imagePullPolicy": true,
	"timeoutSeconds": true, "periodSeconds": true, "successThreshold": true, "failureThreshold": true,
	"protocol": true, "scheme": true, "defaultMode": true, "apiVersion": true,
}

// covers reports whether b (the Pod) holds a (its injected copy): equal,
// but for server defaults b holds and a leaves out.
func covers(b, a any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for _, key := range unionKeys(bv, av) {
			if !coversKey(key, bv[key], av[key]) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(bv) != len(av) {
			return false
		}
		for i := range av {
			if !covers(bv[i], av[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(b, a)
}

func coversKey(key string, b, a any) bool {
	switch {
	case a == nil && b != nil:
		return serverDefaults[key]
	case key == "limits" || key == "requests":
		return sameQuantities(b, a)
	}
	return covers(b, a)
}

// sameQuantities compares resource lists by value: the API server writes
// a quantity in its canonical form (1000m as 1).
func sameQuantities(b, a any) bool {
	bm, am := asMap(b), asMap(a)
	if len(bm) != len(am) {
		return false
	}
	for name, av := range am {
		as, _ := quantityText(av)
		bs, _ := quantityText(bm[name])
		aq, aerr := resource.ParseQuantity(as)
		bq, berr := resource.ParseQuantity(bs)
		if aerr != nil || berr != nil {
			if !reflect.DeepEqual(av, bm[name]) {
				return false
			}
			continue
		}
		if aq.Cmp(bq) != 0 {
			return false
		}
	}
	return true
}

func unionKeys(maps ...map[string]any) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func hasNamed(list []any, name string) bool {
	for _, item := range list {
		if asMap(item)["name"] == name {
			return true
		}
	}
	return false
}
