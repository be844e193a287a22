// Package naming names what the injector writes and reads on objects: the
// annotations of each profile (its status record, its opt-in/out switch,
// its skip reason and its parameters' overrides), the namespace label
// that opts a namespace in to admission injection, and profile names as
// messages give them. The core, the admission policy and every front end
// read these names from here.
package naming
