// Package reason is the type of the codes every command reports (why an
// object was skipped, refused, not restarted or not sized) and the type of
// one row of their tables.
//
// A code is declared once, as a constant of type Code, by the package
// that gives it, and described once, by one Row in that package's table:
// pkg/inject (the core and the live commands), pkg/rollout (restart and
// status), pkg/sizing (size), pkg/admission/inprocess (the admission
// policy's binding as explain reports it) and plugin/cmd (explain). A
// code given by several commands keeps one row that names them all. The
// plugin's TestReasonTables walks the source of every package and fails
// on a code without a row, a row without a code, or a code with two rows.
//
// The package depends on nothing, so that the pure packages (pkg/sizing)
// share the type without the core.
package reason
