// Package staticdir writes, checks and validates a policy's static
// admission manifests: the files an API server (Kubernetes 1.37+) loads
// from the staticManifestsDir of its AdmissionConfiguration, one
// directory per admission plugin (mutating/, validating/).
//
// Files are written whole (a temporary file renamed over the old one), so
// an API server that reloads the directory never reads half a file, and
// only after the set validated as the API server validates it at start:
// a set that would stop an API server is never written. Hash is the
// API server's own hash of a directory, which it reports in its
// apiserver_manifest_admission_config_controller_last_config_info metric:
// equal hashes mean the API server runs those files.
package staticdir
