package version

// Set by the Makefile with -ldflags "-X ...".
var (
	Version = "dev"
	Commit  = "unknown"
)

// String renders "VERSION (COMMIT)".
func String() string { return Version + " (" + Commit + ")" }
