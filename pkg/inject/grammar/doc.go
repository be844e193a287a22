// Package grammar holds the grammars of the values the core checks by
// hand: ports, resource quantities (and their comparison), image
// references, annotation names, DNS labels and subdomains. Each check is
// plain Go over the string, so that no binary compiles a regular
// expression at start; where the admission policy needs the same grammar
// as a pattern (DNSLabelPattern, the parameter types' patterns in
// package template), a test holds the two equal.
package grammar
