package cmd

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// setUpLogging routes client-go's klog output as kubectl's -v does, with
// one difference: at the default verbosity 0 nothing is logged at all,
// errors included. The command reports every error itself, once, in words
// a user can act on; client-go's own copies (discovery's "Unhandled
// Error" lines, one per retry) would only repeat them. From -v=1 on, klog
// writes every line, headers included, to errOut: -v=6 shows each request
// and its status, -v=8 the bodies, as in kubectl.
func setUpLogging(verbosity int, errOut io.Writer) error {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{
		"v":               strconv.Itoa(verbosity),
		"logtostderr":     "false", // to the writer below, not os.Stderr
		"alsologtostderr": "false",
		"stderrthreshold": "FATAL",
		"one_output":      "true", // each line once, not once per severity
	} {
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("set up logging: -%s=%s: %w", name, value, err)
		}
	}
	if verbosity <= 0 {
		klog.SetOutput(io.Discard)
	} else {
		klog.SetOutput(errOut)
	}
	return nil
}

// warningWriter prints the API server's warnings (deprecations, admission
// policies' warnings) as kubectl does, "Warning: ...", each once; they are
// meant for the user, so they never go through klog.
func warningWriter(errOut io.Writer) rest.WarningHandler {
	return rest.NewWarningWriter(errOut, rest.WarningWriterOptions{Deduplicate: true})
}
