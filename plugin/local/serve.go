package local

import (
	"bytes"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/kinject/kubectl-inject/pkg/config"
)

// FrontEnd is the --local front end: the kubectl-inject binary serves
// --local with it (Serve), and the full command runs it through
// config.Local.
type FrontEnd struct {
	// FetchURL reads an -f argument that is a URL (urlfetch.Get). Serve
	// leaves it nil and hands a command line that names a URL to
	// kinject-live, which links an HTTP client anyway: kubectl-inject
	// links none, and its binary is 2 MB (a fifth) smaller for it: fewer
	// pages to map at every start.
	FetchURL func(url string) ([]byte, error)
}

var _ config.Local = FrontEnd{}

// Serve runs the command line args itself when it asks for --local with
// no flag beyond Flags and no error in them, and reports whether it did
// (with the exit code). Anything else (live objects, --help, --version,
// completion, kubectl's flags, a mistake to explain) is left to the full
// command, which gives the same results for what Serve runs: the two share
// Flags, Validate, LoadInjector and Run.
func Serve(args []string, s config.Streams) (code int, served bool) {
	fs := pflag.NewFlagSet("kubectl-inject", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	f := config.NewFlags()
	f.AddFlags(fs)
	f.AddVerbosityFlag(fs) // nothing to log here: --local uses no client
	if err := fs.Parse(args); err != nil || !f.Local || fs.NArg() > 0 || slices.ContainsFunc(f.Filenames, config.IsURL) {
		return 0, false
	}
	f.Complete(fs)
	if len(f.Validate(nil)) > 0 {
		return 0, false
	}
	// The template's warnings wait until it is known that this binary
	// serves the command line.
	var warnings bytes.Buffer
	in, err := f.LoadInjector(config.NoCluster, &warnings)
	if err == nil && in.Template().NeedsCEL() {
		// Expressions that only cel-go evaluates: kinject-live evaluates
		// them in its own process, where kinject-cel would take a round
		// trip to another one per document.
		return 0, false
	}
	_, _ = s.ErrOut.Write(warnings.Bytes())
	if err == nil {
		err = FrontEnd{}.Run(&f, in, s)
	}
	if f.Diff {
		err = config.DiffExit(err)
	}
	return config.ExitCode(err, s.ErrOut), true
}
