// Package record is the status record the core leaves on every pod
// template it injects (annotation sidecar.kinject.dev/status, or
// NAME.sidecar.kinject.dev/status for profile NAME): what was added, what
// was changed and from which template, so that injecting again changes
// nothing and uninject restores the object byte for byte.
//
// Status is the record; Encode writes it as compact JSON in a fixed field
// order, and Parse reads it back strictly (unknown fields, wrong types and
// values outside the grammar are errors, since a hand-edited record cannot
// be trusted to undo an injection). Grammar declares the format field by
// field: the admission policy (pkg/admission) builds the pattern it reads
// other profiles' records with from it, so a change of the format is a
// change of the grammar and of Version, never a side effect of a struct
// tag (TestStatusGrammar holds Status to it).
//
// The package knows nothing of templates or objects; the core
// (pkg/inject) decides what goes in a record.
package record
