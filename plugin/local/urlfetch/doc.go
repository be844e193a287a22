// Package urlfetch reads the -f arguments of --local that are URLs, for
// kinject-live. It is a package of its own so that the kubectl-inject
// binary, which hands such command lines to kinject-live, links no HTTP
// client: net/http and crypto/tls would be 2 MB of its 10.8.
package urlfetch
