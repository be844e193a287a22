// Package local is kubectl-inject's --local: the injection of manifest
// files as text, one document at a time (every byte outside the injected
// lines is kept, memory is bounded by the largest document). Its flags,
// template resolution, warnings and exit codes are pkg/config's, as every
// front end's are.
//
// It links the injection core and no Kubernetes client, so that the
// kubectl-inject binary can serve --local without paying client-go's
// start-up (its type registry alone takes milliseconds and tens of MB of
// resident memory). Serve runs a --local command line; any other command
// line goes to kinject-live, the full command (plugin/cmd), which
// runs --local with this same code: its main package hands FrontEnd to it
// as a config.Local, so that neither front end imports the other. -f URL
// is read by kinject-live only (FrontEnd.FetchURL, urlfetch.Get): an HTTP
// client would add a fifth to the kubectl-inject binary, all of it mapped
// at every start.
//
// --in-place writes each file atomically (a temporary file beside it,
// then a rename) and only when no document failed. It writes the file a
// symbolic link points to and keeps the link, edits a file reached twice
// in a walk once, refuses a link out of the paths given unless
// --follow-external-links, keeps the mode and (where it may) the owner and
// group, and refuses a file the user may not write.
//
// The flags include --profile and --all-profiles: the profile of a
// template that has no field for one (a ConfigMap, a partial Pod spec, the
// embedded default), checked against a SidecarInjection's spec.profile,
// and the removal of every profile's injection with --uninject.
package local
