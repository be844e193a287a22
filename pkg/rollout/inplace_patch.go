package rollout

import (
	"encoding/json"
	"fmt"
)

// Patch is the one request that upgrades the Pod in place: a strategic
// merge patch of the sidecars' images (containers merge by name), the
// record, the marker naming the template the Pod ran before, and Labels.
// resourceVersion, when set, makes the API server refuse it for a Pod
// changed since it was read.
func (u Upgrade) Patch(resourceVersion string) ([]byte, error) {
	annotations := map[string]any{u.RecordKey: u.Record, u.MarkerKey: u.FromTemplate}
	return u.patch(resourceVersion, annotations, u.Labels, func(c ImageChange) string { return c.To })
}

// RollbackPatch brings the Pod back to the images, record and labels it
// had before Patch: the kubelet restarts the sidecars on their old images.
func (u Upgrade) RollbackPatch() ([]byte, error) {
	annotations := map[string]any{u.RecordKey: u.OldRecord, u.MarkerKey: nil}
	return u.patch("", annotations, u.OldLabels, func(c ImageChange) string { return c.From })
}

func (u Upgrade) patch(resourceVersion string, annotations map[string]any, labels map[string]string, image func(ImageChange) string) ([]byte, error) {
	if !u.InPlace() {
		return nil, fmt.Errorf("patching Pod %s in place: %s: %s", u.Pod, u.Reason, u.Message)
	}
	metadata := map[string]any{"annotations": annotations}
	if len(labels) > 0 {
		metadata["labels"] = labels
	}
	if resourceVersion != "" {
		metadata["resourceVersion"] = resourceVersion
	}
	spec := map[string]any{}
	for _, c := range u.Images {
		field := "containers"
		if c.Init {
			field = "initContainers"
		}
		list, _ := spec[field].([]any)
		spec[field] = append(list, map[string]any{"name": c.Container, "image": image(c)})
	}
	body := map[string]any{"metadata": metadata}
	if len(spec) > 0 {
		body["spec"] = spec
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the patch of Pod %s: %w", u.Pod, err)
	}
	return data, nil
}
