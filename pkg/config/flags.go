package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/template"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Flags are the flags of the injection itself (template and policy) and of
// --local. Both binaries register them with AddFlags: the front door to
// serve --local alone, the full command beside kubectl's flags and the
// live-only ones.
type Flags struct {
	Filenames []string
	Recursive bool
	Selector  string

	Local    bool
	InPlace  bool
	DryRun   dryrun.Strategy
	Output   string
	Uninject bool
	Check    bool
	// Diff shows what would change as a unified diff and changes nothing;
	// Color is when to color it (auto: on a terminal).
	Diff  bool
	Color string
	// ContinueOnError writes in place the documents that succeeded even
	// when others failed (those stay as they were).
	ContinueOnError bool
	// FollowExternalLinks lets --in-place edit the file a symbolic link
	// found in a directory points to when that file lies outside the paths
	// given with -f.
	FollowExternalLinks bool

	TemplateFile string
	// TemplateConfigMap names a template ConfigMap in the cluster,
	// "[NAMESPACE/]NAME[:KEY]" (live only).
	TemplateConfigMap string
	// Profile names the sidecar profile to inject, uninject, check or
	// report ("" is the default profile); AllProfiles makes --uninject
	// remove every profile.
	Profile     string
	AllProfiles bool
	// StaticDir is --static: the directory of the policy's static
	// admission manifests (policy writes it, the others read the policy
	// there, since the API does not list static objects).
	StaticDir string

	// Verbosity is kubectl's -v: the level of client-go's log lines (the
	// full command's; --local has none).
	Verbosity int

	// Set by Complete: the settings the template flags that were given
	// set (their names in given), or why they cannot be used.
	settings    inject.Settings
	given       []string
	settingsErr error
	profileSet  bool
}

// NewFlags returns Flags with their defaults.
func NewFlags() Flags { return Flags{DryRun: dryrun.None, Color: "auto"} }

// AddFlags registers the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&f.Filenames, "filename", "f", nil, "Files, directories or URLs naming the objects (live) or holding the manifests (--local); - reads stdin")
	fs.BoolVarP(&f.Recursive, "recursive", "R", false, "Process the directories given with -f recursively")
	fs.StringVarP(&f.Selector, "selector", "l", "", "Label selector (live: which objects to read; --local: which objects to inject)")
	fs.BoolVar(&f.Local, "local", false, "Edit the files given with -f instead of live objects; needs no cluster")
	fs.BoolVar(&f.ContinueOnError, "continue-on-error", false, "With --in-place: write the documents that succeeded even when others failed (the failed ones stay as they were); the exit code is still 1")
	fs.BoolVar(&f.InPlace, "in-place", false, "With --local: rewrite the files (atomically, keeping their mode, owner and group; a symbolic link is kept and the file it points to rewritten, once) instead of printing; nothing is written when any document fails, and a file you may not write is an error")
	fs.BoolVar(&f.FollowExternalLinks, "follow-external-links", false, "With --in-place: also edit files outside the paths given with -f that symbolic links in those directories point to (by default such a link is an error)")
	fs.StringVar((*string)(&f.DryRun), "dry-run", string(f.DryRun), `"none", "client" (compute only) or "server" (the server runs the change without storing it)`)
	fs.StringVarP(&f.Output, "output", "o", "", "Print the resulting objects: yaml, json or name")
	fs.BoolVar(&f.Uninject, "uninject", false, "Remove exactly what an earlier injection added")
	fs.BoolVar(&f.Check, "check", false, "Change nothing; exit 1 when any object is not injected with the current template")
	fs.BoolVar(&f.Diff, "diff", false, "Change nothing; show what would change as a unified diff (exit 0: no change, 1: a change, 2: an error, as kubectl diff)")
	fs.StringVar(&f.Color, "color", f.Color, `With --diff: "auto" (colors on a terminal), "always" or "never"`)
	f.AddTemplateFlags(fs)
	fs.BoolVar(&f.AllProfiles, "all-profiles", false, "With --uninject: remove the injections of every profile (NAME.sidecar.kinject.dev/status records and the default one)")
}

// AddTemplateFlags registers the template flags: what is injected, and
// into what. inject, policy, status, restart and check take every one of
// them, with one meaning: for status, restart and check they say what
// "current" is.
func (f *Flags) AddTemplateFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.TemplateFile, "template", "", "Template file: a SidecarInjection, a template ConfigMap (data.config) or a partial Pod spec (default: the installed admission policy's for status, restart and check, else the embedded Envoy sidecar)")
	fs.StringVar(&f.TemplateConfigMap, "template-configmap", "", "Read the template from a ConfigMap in the cluster: [NAMESPACE/]NAME[:KEY] (key default: config)")
	for _, sf := range settingFlags {
		if !sf.policyOnly {
			AddSettingFlag(fs, sf.flag, "")
		}
	}
	f.AddProfileFlag(fs)
}

// TemplateGiven reports whether --template or --template-configmap says
// which template to use.
func (f *Flags) TemplateGiven() bool { return f.TemplateFile != "" || f.TemplateConfigMap != "" }

// AddVerbosityFlag registers kubectl's -v, --v on fs: separately from
// AddFlags, so that the full command can make it persistent (its
// subcommands take it too). kubectl's meaning: -v is log verbosity, never
// --version.
func (f *Flags) AddVerbosityFlag(fs *pflag.FlagSet) {
	fs.IntVarP(&f.Verbosity, "v", "v", 0, "Log level of the Kubernetes client, as kubectl's: 0 logs nothing (the default), 6 each request, 8 the bodies too")
}

// Complete records what depends on which flags were given; call it once
// fs is parsed.
func (f *Flags) Complete(fs *pflag.FlagSet) {
	f.profileSet = fs.Changed("profile")
	f.completeSettings(fs)
	if fs.Changed("dry-run") && f.DryRun == "" {
		f.DryRun = dryrun.Client
	}
}

// Op is the operation the flags ask for.
func (f *Flags) Op() inject.Op {
	if f.Uninject {
		return inject.UninjectOp(f.AllProfiles)
	}
	return inject.OpInject
}

// Validate checks these flags for consistency and, with --local, that
// args (the positional arguments) are empty; it reports every problem.
func (f *Flags) Validate(args []string) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch f.DryRun {
	case dryrun.None, dryrun.Client, dryrun.Server:
	default:
		add("--dry-run must be none, client or server, not %q", f.DryRun)
	}
	switch f.Output {
	case "", "yaml", "json", "name":
	default:
		add("--output must be yaml, json or name, not %q", f.Output)
	}
	if f.Check && f.InPlace {
		add("--check changes nothing; it cannot be combined with --in-place")
	}
	switch f.Color {
	case "auto", "always", "never":
	default:
		add("--color must be auto, always or never, not %q", f.Color)
	}
	if f.Diff {
		for _, flag := range []struct {
			name string
			set  bool
		}{{"--in-place", f.InPlace}, {"--check", f.Check}, {"--output", f.Output != ""}} {
			if flag.set {
				add("--diff shows the change and makes none; it cannot be combined with %s", flag.name)
			}
		}
	}
	errs = append(errs, f.ValidateTemplateFlags()...)
	if f.FollowExternalLinks && !f.InPlace {
		add("--follow-external-links needs --in-place (only editing follows links with care)")
	}
	if f.ContinueOnError && !f.InPlace {
		add("--continue-on-error needs --in-place (without it, failed documents are printed unchanged anyway)")
	}
	if !f.Local {
		return errs
	}
	if len(f.Filenames) == 0 {
		add("--local needs the manifests: -f FILE|DIR|-")
	}
	if len(args) > 0 {
		add("--local reads files only; remove the arguments %q or drop --local", strings.Join(args, " "))
	}
	if f.DryRun == dryrun.Server {
		add("--dry-run=server needs a cluster; it cannot be used with --local")
	}
	if f.TemplateConfigMap != "" {
		add("--template-configmap needs a cluster; it cannot be used with --local")
	}
	if f.InPlace {
		for _, name := range f.Filenames {
			if name == "-" || IsURL(name) {
				add("--in-place cannot rewrite %q; give files or directories", name)
			}
		}
		if f.Output != "" {
			add("--in-place writes the files; it cannot be combined with --output")
		}
	}
	if f.Output == "name" {
		add("--local prints the objects; --output name is for live objects")
	}
	if (f.Output == "json" || f.Output == "yaml") && f.Check {
		add("--check prints nothing; it cannot be combined with --output")
	}
	return errs
}

// LoadInjector builds the injector: the template from --template, else
// the one --template-configmap ("[NAMESPACE/]NAME[:KEY]", live only) names, else the
// embedded default; then the policy flags over the settings a template
// file carries. lookup reads a ConfigMap a template reference names when
// no later document of the template file holds it. Privilege warnings go
// to warn.
func (f *Flags) LoadInjector(lookup inject.ConfigMapLookup, warn io.Writer) (*inject.Injector, error) {
	tmpl, settings, err := f.LoadTemplate(lookup)
	if err != nil {
		return nil, err
	}
	return NewInjector(tmpl, settings, warn)
}

// LoadTemplate returns the template and the settings LoadInjector
// combines, for commands that add settings of their own first.
func (f *Flags) LoadTemplate(lookup inject.ConfigMapLookup) (*template.Template, inject.Settings, error) {
	return f.LoadTemplateOver(nil, lookup)
}

// LoadTemplateOver is LoadTemplate with base (an installed policy's
// configuration) in place of the embedded default: used when neither
// --template nor --template-configmap is given, with the other template
// flags over it.
func (f *Flags) LoadTemplateOver(base *inject.Config, lookup inject.ConfigMapLookup) (*template.Template, inject.Settings, error) {
	var (
		tmpl     *template.Template
		settings inject.Settings
		declared *declaredProfile
	)
	clusterRef := f.TemplateConfigMap
	switch {
	case !f.TemplateGiven() && base != nil:
		tmpl, settings = base.Template, base.Settings
	case f.TemplateFile != "":
		cfg, d, err := loadTemplateFile(f.TemplateFile, lookup)
		if err != nil {
			return nil, settings, err
		}
		tmpl, settings, declared = cfg.Template, cfg.Settings, d
		// The file's options: uninject's reach, as --all-profiles, and
		// where its template is.
		f.AllProfiles = f.AllProfiles || cfg.Options.AllProfiles
		if tmpl == nil && cfg.Options.TemplateConfigMap != "" {
			if tmpl, err = templateFromConfigMap(cfg.Options.TemplateConfigMap, lookup); err != nil {
				return nil, settings, fmt.Errorf("%s: templateConfigMap: %w", f.TemplateFile, err)
			}
		}
	case clusterRef != "":
		var err error
		if tmpl, err = templateFromConfigMap(clusterRef, lookup); err != nil {
			return nil, settings, fmt.Errorf("--template-configmap %s: %w", clusterRef, err)
		}
	}
	if tmpl == nil {
		tmpl = inject.DefaultTemplate()
	}
	if err := f.applySettings(&settings); err != nil {
		return nil, settings, err
	}
	if err := f.applyProfile(&settings, declared); err != nil {
		return nil, settings, err
	}
	return tmpl, settings, nil
}

// NewInjector combines a template and settings, printing the template's
// privilege warnings to warn.
func NewInjector(tmpl *template.Template, settings inject.Settings, warn io.Writer) (*inject.Injector, error) {
	in, err := inject.New(tmpl, settings)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	for _, w := range in.Template().Warnings() {
		fmt.Fprintf(warn, "Warning: template widens privileges: %s\n", w)
	}
	for _, w := range PortWarnings(in.Template()) {
		fmt.Fprintf(warn, "Warning: %s\n", w)
	}
	return in, nil
}

// PortWarnings name the ports a template's sidecars bind that no
// containerPort declares and reservedPorts does not list: an app could
// use them and would not be refused.
func PortWarnings(t *template.Template) []string {
	var out []string
	for _, b := range t.UnreservedPorts() {
		out = append(out, fmt.Sprintf("container %q binds port %d (%s), which no containerPort declares and reservedPorts does not list: an app on it would not be refused (add it to reservedPorts)", b.Container, b.Port, b.Where))
	}
	return out
}

// NoCluster is the ConfigMap lookup of --local: a template that refers to
// a ConfigMap no document of its file holds is an error.
func NoCluster(_, name string) (*yaml.RNode, error) {
	return nil, fmt.Errorf("the template refers to ConfigMap %s in the cluster, which --local does not read; use a template file", name)
}

// loadTemplateFile reads a configuration file: its first document
// configures, and ConfigMaps in later documents serve spec.templateRef
// before lookup is asked. It also returns the profile a SidecarInjection
// names (nil for the other forms, which have no field for it).
func loadTemplateFile(path string, lookup inject.ConfigMapLookup) (*inject.Config, *declaredProfile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read template: %w", err)
	}
	cfg, err := inject.ParseConfig(data, lookup)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, readDeclaredProfile(path, data), nil
}

// templateFromConfigMap resolves a template ConfigMap reference,
// "[NAMESPACE/]NAME[:KEY]", with lookup: for --template-configmap, a
// template file's templateConfigMap setting and a function config's, in
// this one place.
func templateFromConfigMap(ref string, lookup inject.ConfigMapLookup) (*template.Template, error) {
	r, err := inject.ParseTemplateRef(ref)
	if err != nil {
		return nil, err
	}
	return inject.ResolveTemplateRef(r, lookup)
}

// completeSettings decodes the template flags that were given into
// settings, with the settings' own schema and validation; --selector
// selects objects by label with --local only (live, it says which objects
// to read).
func (f *Flags) completeSettings(fs *pflag.FlagSet) {
	var pairs [][2]string
	flagOf := map[string]string{}
	f.given = nil
	add := func(flag, setting, value string) {
		pairs = append(pairs, [2]string{setting, value})
		flagOf[setting] = flag
		f.given = append(f.given, setting)
	}
	for _, sf := range settingFlags {
		fl := fs.Lookup(sf.flag)
		if fl == nil || !fl.Changed {
			continue
		}
		value := fl.Value.String()
		if list, ok := fl.Value.(pflag.SliceValue); ok {
			// A list setting takes one comma-separated string.
			value = strings.Join(list.GetSlice(), ",")
		}
		add(sf.flag, sf.setting, value)
	}
	if f.Local && f.Selector != "" {
		add("selector", "selector", f.Selector)
	}
	f.settings, f.settingsErr = inject.DecodeSettings(inject.FlatSettings(pairs), "")
	var fe *inject.FieldError
	if errors.As(f.settingsErr, &fe) {
		f.settingsErr = fmt.Errorf("--%s: %w", flagOf[fe.Field], fe.Err)
	}
}

// applySettings overlays the flags that were given on s.
func (f *Flags) applySettings(s *inject.Settings) error {
	if f.settingsErr != nil {
		return f.settingsErr
	}
	*s = s.Override(f.settings, f.given...)
	return nil
}

// ExitError is an error that carries the exit code; Silent ones have
// already been reported.
type ExitError struct {
	Code   int
	Silent bool
	Err    error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit codes of --diff, as kubectl diff's: 0 nothing would change, 1 the
// diff shows a change, anything above 1 an error.
const (
	DiffChangedCode = 1
	DiffErrorCode   = 2
)

// DiffChanged is the result of a --diff run that printed a change: n
// objects or files differ.
func DiffChanged(n int, what string) error {
	return &ExitError{Code: DiffChangedCode, Silent: true, Err: &diffChanged{n, what}}
}

type diffChanged struct {
	n    int
	what string
}

func (d *diffChanged) Error() string { return fmt.Sprintf("%d %s would change", d.n, d.what) }

// DiffExit maps the error of a --diff run to kubectl diff's exit codes: a
// change found stays 1, every failure (a flag, a file, an object that
// failed) becomes 2, so that a script tells them apart.
func DiffExit(err error) error {
	var changed *diffChanged
	if err == nil || errors.As(err, &changed) {
		return err
	}
	ee := &ExitError{Code: DiffErrorCode, Err: err}
	var inner *ExitError
	if errors.As(err, &inner) {
		ee.Silent, ee.Err = inner.Silent, inner.Err
	}
	return ee
}

// ExitCode maps the error of a run to the process exit code (0 for nil),
// printing it to errOut as kubectl does unless it was reported already.
func ExitCode(err error, errOut io.Writer) int {
	if err == nil {
		return 0
	}
	code := 1
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
		if ee.Silent {
			return code
		}
	}
	fmt.Fprintf(errOut, "error: %v\n", err)
	return code
}

// IsURL reports whether an -f argument names a URL (fetched) rather than
// a file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}
