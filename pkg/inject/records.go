package inject

import (
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// profileRecord is one profile's status record found on a pod template.
type profileRecord struct {
	profile string
	key     string // the annotation holding it
	status  *record.Status
}

// readRecords returns every profile's status record on the pod template,
// in the order of the annotations. A record that does not parse is an
// error: what it owns cannot be known.
func readRecords(t *podTarget) ([]profileRecord, error) {
	ann := nodes.MapValue(t.meta, "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return nil, nil
	}
	var out []profileRecord
	for i := 0; i+1 < len(ann.Content); i += 2 {
		key := ann.Content[i].Value
		profile, ok := naming.ProfileOfStatusKey(key)
		if !ok {
			continue
		}
		s, err := record.Parse(key, ann.Content[i+1].Value)
		if err != nil {
			return nil, err
		}
		out = append(out, profileRecord{profile: profile, key: key, status: s})
	}
	return out, nil
}

// others are the records of the profiles besides the one being processed:
// what they own cannot be taken, and fields they created are created for
// every profile that adds to them.
type others []profileRecord

// without returns the records other than profile's.
func (rs others) without(profile string) others {
	var out others
	for _, r := range rs {
		if r.profile != profile {
			out = append(out, r)
		}
	}
	return out
}

// owner returns the profile whose record lists name as added of the kind,
// or holds a value of it that it changed.
func (rs others) owner(k ConflictKind, name string) (string, bool) {
	for _, r := range rs {
		if addedBy(r.status, k, name) {
			return r.profile, true
		}
	}
	return "", false
}

// claims reports whether another profile lists the annotation key as added:
// the default-container annotation is shared by every profile that adds
// containers, and stays until the last of them is removed.
func (rs others) claims(key string) bool {
	_, ok := rs.owner(ConflictAnnotation, key)
	return ok
}

// sidecars returns the names of every container the records list.
func (rs others) sidecars() map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		for _, n := range r.status.Containers {
			out[n] = true
		}
		for _, n := range r.status.InitContainers {
			out[n] = true
		}
	}
	return out
}

// inherit records field as created (or filled, or laid out in place of
// the blank space it held when empty) in s when another profile recorded
// it so: the field would not be so without the profiles, so each one
// that adds to it records that, and the last one removed takes it away.
// This keeps every profile's record the same whatever the order of
// injection.
func (rs others) inherit(s *record.Status, field string) {
	for _, r := range rs {
		switch {
		case r.status.EmptyText(field) != "":
			s.NoteEmpty(field, r.status.EmptyText(field))
			return
		case r.status.WasCreated(field):
			s.AddField(field, nil)
			return
		case r.status.WasNull(field):
			s.AddField(field, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: r.status.NullToken(field)})
			return
		}
	}
}
