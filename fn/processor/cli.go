package processor

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/report"
	"github.com/kinject/kubectl-inject/pkg/version"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Main runs the inject-fn command line and returns its exit code. With no
// arguments it is the KRM function (ResourceList on stdin, on stdout);
// with a config file and input files it edits plain YAML; see Help.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("inject-fn", flag.ContinueOnError)
	flags.SetOutput(stderr)
	showVersion := flags.Bool("version", false, "print the version and exit")
	uninject := flags.Bool("uninject", false, "in file mode, remove earlier injections instead")
	copyTo := flags.String("copy-to", "", "copy this binary into the directory as inject-fn, and kinject-cel beside it, and exit")
	// --help prints Help once, to stdout; a mistake prints the flag
	// package's error and a pointer to --help, to stderr.
	flags.Usage = func() {}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, Help())
			return 0
		}
		fmt.Fprintln(stderr, "Run 'inject-fn --help' for usage.")
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "inject-fn %s\n", version.String())
		return 0
	}
	if *copyTo != "" {
		if flags.NArg() > 0 {
			fmt.Fprintf(stderr, "inject-fn: --copy-to takes no other arguments, not %q\n", flags.Args())
			return 2
		}
		dest, err := CopySelf(*copyTo)
		if err != nil {
			fmt.Fprintf(stderr, "inject-fn: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "inject-fn %s copied to %s\n", version.String(), dest)
		return 0
	}
	if flags.NArg() == 0 {
		return runKRM(stdin, stdout, stderr)
	}
	files := FileMode{Config: flags.Arg(0), Inputs: flags.Args()[1:], Uninject: *uninject, Stdin: stdin}
	failed, err := files.Run(stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "inject-fn: %v\n", err)
		return 1
	}
	if failed {
		return 1
	}
	return 0
}

// runKRM is the KRM function. Error results are repeated on stderr, which
// is all kustomize shows of a failing function.
func runKRM(stdin io.Reader, stdout, stderr io.Writer) int {
	err := Run(Processor{}, stdin, stdout)
	if err == nil {
		return 0
	}
	var results Results
	if errors.As(err, &results) {
		for _, r := range results {
			fmt.Fprintf(stderr, "inject-fn: %s\n", r)
		}
		return 1
	}
	fmt.Fprintf(stderr, "inject-fn: %v\n", err)
	return 1
}

// FileMode edits plain multi-document YAML files in text form: every byte
// the injection does not change is written as it was read.
type FileMode struct {
	// Config is the function config file; it may hold further documents,
	// such as the ConfigMap a templateRef names.
	Config string
	// Inputs are the files to edit, "-" (or none) for Stdin.
	Inputs   []string
	Uninject bool
	Stdin    io.Reader
}

// Run writes the edited inputs to stdout, one after the other, and one
// line per workload to stderr. failed reports whether any object could not
// be processed.
func (m FileMode) Run(stdout, stderr io.Writer) (failed bool, err error) {
	configs, err := m.loadConfigs()
	if err != nil {
		return false, err
	}
	named := nameProfiles(configs)
	for _, cfg := range configs {
		if m.Uninject {
			cfg.Op = inject.UninjectOp(cfg.AllProfiles)
		}
		for _, w := range cfg.Injector.Template().Warnings() {
			fmt.Fprintf(stderr, "warning: %stemplate widens privileges: %s\n", profilePrefix(cfg, named), w)
		}
	}
	inputs := m.Inputs
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	for i, path := range inputs {
		if i > 0 {
			fmt.Fprintln(stdout, "---")
		}
		f, err := m.processFile(configs, named, path, stdout, stderr)
		if err != nil {
			return failed, err
		}
		failed = failed || f
	}
	return failed, nil
}

// processFile runs every config over each document of the file in turn, so
// that a document carries every profile when it is written.
func (m FileMode) processFile(configs []*config.Function, named bool, path string, stdout, stderr io.Writer) (failed bool, err error) {
	var r io.Reader = m.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return false, err
		}
		defer f.Close()
		r = f
	}
	// Documents are parsed on the other cores, ahead of the one processed;
	// a second profile reads what the first one wrote.
	err = manifest.ProcessAhead(r, stdout, inject.ParseDocuments, func(d manifest.Document, parsed *inject.Parsed) []byte {
		text := d.Text
		failedBy := "" // the first profile that failed on the document
		for i, cfg := range configs {
			var entries []inject.Entry
			if i == 0 {
				text, entries = cfg.Injector.ProcessParsed(cfg.Op, parsed)
			} else {
				text, entries = cfg.Injector.ProcessText(cfg.Op, text, d.Index)
			}
			for _, e := range entries {
				if e.Action == inject.Skipped && e.Reason == inject.ReasonNotAWorkload {
					continue
				}
				if e.Action == inject.Failed && failedBy == "" {
					failedBy = naming.ProfileName(cfg.Injector.Profile())
				}
				line := fileLine(path, d, e)
				if prefix := profilePrefix(cfg, named); prefix != "" {
					line += " (" + strings.TrimSuffix(prefix, ": ") + ")"
				}
				fmt.Fprintln(stderr, line)
			}
		}
		if failedBy == "" {
			return text
		}
		failed = true
		if len(configs) > 1 {
			// As in the KRM mode: all profiles or none.
			fmt.Fprintf(stderr, "%s:%d: document %d left as it was: %s failed on it, so no profile's change is kept\n", path, d.Line, d.Index+1, failedBy)
			return d.Text
		}
		return text
	})
	if err != nil {
		return failed, fmt.Errorf("processing %s: %w", path, err)
	}
	return failed, nil
}

// loadConfigs reads the config file: its first document, or, when that
// is a SidecarInjection, every SidecarInjection in it, one per profile (as
// LoadConfigs picks them from a ResourceList). Template references resolve
// against the ConfigMaps of the config file and, when not found there, of
// the input files (not stdin).
func (m FileMode) loadConfigs() ([]*config.Function, error) {
	docs, err := readFile(m.Config)
	if err != nil {
		return nil, err
	}
	for i, d := range docs {
		if err := inject.CheckObjectShape(d); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", m.Config, i+1, err)
		}
	}
	var fc *yaml.RNode
	if len(docs) > 0 {
		fc = docs[0]
	}
	inputs := func() []*yaml.RNode {
		var all []*yaml.RNode
		for _, p := range m.Inputs {
			if p == "-" {
				continue
			}
			if d, err := readFile(p); err == nil {
				all = append(all, d...)
			}
		}
		return all
	}
	lookup := inject.DocumentLookup(docs, func(namespace, name string) (*yaml.RNode, error) {
		return ItemLookup(inputs())(namespace, name)
	})
	configs, errs := LoadConfigs(fc, docs, lookup)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, r := range errs {
			msgs[i] = r.Message
		}
		return nil, fmt.Errorf("%s: %s", m.Config, strings.Join(msgs, "; "))
	}
	return configs, nil
}

// readFile reads every document of a file as the injection core reads
// them: JSON values one after the other are documents of their own, and a
// document that does not parse is an error naming it (kyaml's reader would
// keep only the first of several JSON values, and say nothing).
func readFile(path string) ([]*yaml.RNode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var docs []*yaml.RNode
	var parseErr error
	err = manifest.ProcessDocuments(f, io.Discard, func(d manifest.Document) []byte {
		if parseErr != nil {
			return nil
		}
		n, err := inject.ParseDocument(d.Text)
		switch {
		case err != nil:
			parseErr = fmt.Errorf("reading %s: document %d (line %d): %w", path, d.Index+1, d.ContentLine(), err)
		case n != nil:
			docs = append(docs, n)
		}
		return nil
	})
	if err == nil {
		err = parseErr
	}
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// fileLine renders the report line of one object in file mode, in the
// words of kubectl inject --local: "app.yaml: deployment.apps/web
// injected", "app.yaml: pod/p skipped: host_network", or an error at the
// file's line (and column), the document counted from 1.
func fileLine(path string, d manifest.Document, e inject.Entry) string {
	if e.Action == inject.Failed {
		return report.Error(path, d, e)
	}
	line := path + ": " + report.Object(e) + " " + string(e.Action)
	if e.Action == inject.Skipped && e.Reason != "" {
		line += ": " + string(e.Reason)
	}
	if e.Reformatted {
		line += " (reformatted)"
	}
	return line
}
