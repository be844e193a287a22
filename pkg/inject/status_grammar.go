package inject

import "slices"

// The status record's type, and its grammar: its fields as Encode writes
// them, in order, and what each may hold. The admission policy reads other
// profiles' records with a pattern built from it, so a change of the
// record's format is a change of this grammar (and of statusVersion), not
// a side effect of a struct tag; TestStatusGrammar holds Status to it.

// Status is the record kept in StatusAnnotation: what was added, what was
// changed and from which template. Uninject reads only this record; it never
// guesses by name.
type Status struct {
	Version int `json:"v"`
	// Template is the hash of the template that was injected.
	Template       string   `json:"template"`
	Containers     []string `json:"containers,omitempty"`
	InitContainers []string `json:"initContainers,omitempty"`
	Volumes        []string `json:"volumes,omitempty"`
	// Labels and Annotations are the keys added to the pod template.
	Labels      []string `json:"labels,omitempty"`
	Annotations []string `json:"annotations,omitempty"`
	// Changed holds the previous values of labels and annotations that the
	// template overwrote, so uninject can restore them.
	Changed *Changed `json:"changed,omitempty"`
	// Created lists the fields that did not exist before injection
	// ("volumes", "metadata.annotations", ...), so uninject removes them again.
	Created []string `json:"created,omitempty"`
	// Null lists the fields that were present but empty ("volumes:"), so
	// uninject empties them again rather than removing them.
	Null []string `json:"null,omitempty"`
	// NullTokens holds how an empty field of Null was written when it was
	// not simply left empty ("null", "~"), so uninject writes it back.
	NullTokens map[string]string `json:"nullTokens,omitempty"`
	// Empty holds, by field, what was between the brackets of a field that
	// was an empty collection the items were laid out around ("[\n  ]" in
	// indented JSON, which gets encoding/json's layout), so uninject writes
	// it back. It is recorded on the text path only: the node path has no
	// text, and its serializer writes "[]" anyway.
	Empty map[string]string `json:"empty,omitempty"`
	// Values holds the override annotations that were set, by parameter
	// name, with the values used. An object is current only while its
	// annotations ask for exactly these values.
	Values map[string]string `json:"values,omitempty"`
}

// Changed holds previous values by key.
type Changed struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// statusVersion is the version of the Status record format.
const statusVersion = 1

// Fields whose creation Status records.
const (
	createdMetadata       = "metadata"
	createdLabels         = "metadata.labels"
	createdAnnotations    = "metadata.annotations"
	createdContainers     = "containers"
	createdInitContainers = "initContainers"
	createdVolumes        = "volumes"
	// emptySpec names the pod spec in Empty only: it is never created.
	emptySpec = "spec"
)

// The fields of a status record, by their JSON names.
const (
	statusVersionField   = "v"
	statusTemplate       = "template"
	statusContainers     = "containers"
	statusInitContainers = "initContainers"
	statusVolumes        = "volumes"
	statusLabels         = "labels"
	statusAnnotations    = "annotations"
	statusChanged        = "changed"
	statusCreated        = "created"
	statusNull           = "null"
	statusNullTokens     = "nullTokens"
	statusEmpty          = "empty"
	statusValues         = "values"
)

// RecordValue is the JSON type of a record field's value.
type RecordValue int

// The types of record values.
const (
	RecordInt    RecordValue = iota // a number
	RecordString                    // a string
	RecordList                      // a list of strings
	RecordMap                       // an object of strings by string keys
	RecordObject                    // an object of the field's Fields
)

// RecordField is one field of the status record.
type RecordField struct {
	// Name is the field's JSON name.
	Name  string
	Value RecordValue
	// Optional fields are left out when empty.
	Optional bool
	// Fields are those of a RecordObject, in order.
	Fields []RecordField
	// Const is the only value of a RecordInt (the version).
	Const int
	// NonEmpty: a RecordString is never "".
	NonEmpty bool
	// Words, when set, are the only strings of a RecordList, or the only
	// keys of a RecordMap.
	Words []string
	// Values, when set, are the only values of a RecordMap.
	Values []string
	// Blank: a RecordMap's values are blank space, one character or more.
	Blank bool
}

// recordedFields are the fields a record names in created, null and
// nullTokens, sorted.
var recordedFields = []string{createdContainers, createdInitContainers, createdMetadata, createdAnnotations, createdLabels, createdVolumes}

// nullTokens are the ways YAML writes null that a record keeps.
var nullTokens = []string{"null", "Null", "NULL", "~"}

// StatusGrammar is the status record's fields, in the order Encode writes
// them.
func StatusGrammar() []RecordField {
	return []RecordField{
		{Name: statusVersionField, Value: RecordInt, Const: statusVersion},
		{Name: statusTemplate, Value: RecordString, NonEmpty: true},
		{Name: statusContainers, Value: RecordList, Optional: true},
		{Name: statusInitContainers, Value: RecordList, Optional: true},
		{Name: statusVolumes, Value: RecordList, Optional: true},
		{Name: statusLabels, Value: RecordList, Optional: true},
		{Name: statusAnnotations, Value: RecordList, Optional: true},
		{Name: statusChanged, Value: RecordObject, Optional: true, Fields: []RecordField{
			{Name: statusLabels, Value: RecordMap, Optional: true},
			{Name: statusAnnotations, Value: RecordMap, Optional: true},
		}},
		{Name: statusCreated, Value: RecordList, Optional: true, Words: recordedFields},
		{Name: statusNull, Value: RecordList, Optional: true, Words: recordedFields},
		{Name: statusNullTokens, Value: RecordMap, Optional: true, Words: recordedFields, Values: nullTokens},
		{Name: statusEmpty, Value: RecordMap, Optional: true, Words: append([]string{emptySpec}, recordedFields...), Blank: true},
		{Name: statusValues, Value: RecordMap, Optional: true},
	}
}

// list is the record's list field named field (its JSON name).
func (s *Status) list(field string) []string {
	switch field {
	case statusContainers:
		return s.Containers
	case statusInitContainers:
		return s.InitContainers
	case statusVolumes:
		return s.Volumes
	case statusLabels:
		return s.Labels
	case statusAnnotations:
		return s.Annotations
	case statusCreated:
		return s.Created
	case statusNull:
		return s.Null
	}
	return nil
}

// changed is the map of the record's "changed" named field: the previous
// values of labels or annotations.
func (s *Status) changed(field string) map[string]string {
	switch {
	case s.Changed == nil:
		return nil
	case field == statusLabels:
		return s.Changed.Labels
	case field == statusAnnotations:
		return s.Changed.Annotations
	}
	return nil
}

// isRecordedField reports whether a record may name field in created,
// null or nullTokens.
func isRecordedField(field string) bool { return slices.Contains(recordedFields, field) }
