package record

import "slices"

// The status record's type, and its grammar: its fields as Encode writes
// them, in order, and what each may hold. The admission policy reads other
// profiles' records with a pattern built from it, so a change of the
// record's format is a change of this grammar (and of Version), not a side
// effect of a struct tag; TestStatusGrammar holds Status to it.

// Status is the record kept in a profile's status annotation
// (naming.StatusAnnotationFor): what was added, what was
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

// Version is the version of the Status record format.
const Version = 1

// Fields of the pod template whose creation Status records (in created,
// null, nullTokens and empty).
const (
	FieldMetadata       = "metadata"
	FieldLabels         = "metadata.labels"
	FieldAnnotations    = "metadata.annotations"
	FieldContainers     = "containers"
	FieldInitContainers = "initContainers"
	FieldVolumes        = "volumes"
	// EmptySpec names the pod spec in Empty only: it is never created.
	EmptySpec = "spec"
)

// The fields of a status record, by their JSON names; the Key ones name
// the lists of what was added (List) and the maps of what was changed
// (ChangedOf).
const (
	statusVersionField = "v"
	statusTemplate     = "template"
	KeyContainers      = "containers"
	KeyInitContainers  = "initContainers"
	KeyVolumes         = "volumes"
	KeyLabels          = "labels"
	KeyAnnotations     = "annotations"
	statusChanged      = "changed"
	statusCreated      = "created"
	statusNull         = "null"
	statusNullTokens   = "nullTokens"
	statusEmpty        = "empty"
	statusValues       = "values"
)

// Value is the JSON type of a record field's value.
type Value int

// The types of record values.
const (
	Int    Value = iota // a number
	String              // a string
	List                // a list of strings
	Map                 // an object of strings by string keys
	Object              // an object of the field's Fields
)

// Field is one field of the status record.
type Field struct {
	// Name is the field's JSON name.
	Name  string
	Value Value
	// Optional fields are left out when empty.
	Optional bool
	// Fields are those of a Object, in order.
	Fields []Field
	// Const is the only value of a Int (the version).
	Const int
	// NonEmpty: a String is never "".
	NonEmpty bool
	// Words, when set, are the only strings of a List, or the only
	// keys of a Map.
	Words []string
	// Values, when set, are the only values of a Map.
	Values []string
	// Blank: a Map's values are blank space, one character or more.
	Blank bool
}

// recordedFields are the fields a record names in created, null and
// nullTokens, sorted.
var recordedFields = []string{FieldContainers, FieldInitContainers, FieldMetadata, FieldAnnotations, FieldLabels, FieldVolumes}

// nullTokens are the ways YAML writes null that a record keeps.
var nullTokens = []string{"null", "Null", "NULL", "~"}

// Grammar is the status record's fields, in the order Encode writes them.
func Grammar() []Field {
	return []Field{
		{Name: statusVersionField, Value: Int, Const: Version},
		{Name: statusTemplate, Value: String, NonEmpty: true},
		{Name: KeyContainers, Value: List, Optional: true},
		{Name: KeyInitContainers, Value: List, Optional: true},
		{Name: KeyVolumes, Value: List, Optional: true},
		{Name: KeyLabels, Value: List, Optional: true},
		{Name: KeyAnnotations, Value: List, Optional: true},
		{Name: statusChanged, Value: Object, Optional: true, Fields: []Field{
			{Name: KeyLabels, Value: Map, Optional: true},
			{Name: KeyAnnotations, Value: Map, Optional: true},
		}},
		{Name: statusCreated, Value: List, Optional: true, Words: recordedFields},
		{Name: statusNull, Value: List, Optional: true, Words: recordedFields},
		{Name: statusNullTokens, Value: Map, Optional: true, Words: recordedFields, Values: nullTokens},
		{Name: statusEmpty, Value: Map, Optional: true, Words: append([]string{EmptySpec}, recordedFields...), Blank: true},
		{Name: statusValues, Value: Map, Optional: true},
	}
}

// List is the record's list field named field (its JSON name:
// KeyContainers, ...).
func (s *Status) List(field string) []string {
	switch field {
	case KeyContainers:
		return s.Containers
	case KeyInitContainers:
		return s.InitContainers
	case KeyVolumes:
		return s.Volumes
	case KeyLabels:
		return s.Labels
	case KeyAnnotations:
		return s.Annotations
	case statusCreated:
		return s.Created
	case statusNull:
		return s.Null
	}
	return nil
}

// ChangedOf is the map of the record's "changed" named field (KeyLabels or
// KeyAnnotations): the previous values of labels or annotations.
func (s *Status) ChangedOf(field string) map[string]string {
	switch {
	case s.Changed == nil:
		return nil
	case field == KeyLabels:
		return s.Changed.Labels
	case field == KeyAnnotations:
		return s.Changed.Annotations
	}
	return nil
}

// isRecordedField reports whether a record may name field in created,
// null or nullTokens.
func isRecordedField(field string) bool { return slices.Contains(recordedFields, field) }
