package cmd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/template"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// current is what "current" means for status, restart and check, and
// where it was read.
type current struct {
	Template *template.Template
	Settings inject.Settings
	// Policy names the installed policy it was read from ("" when it
	// comes from the flags or the embedded default).
	Policy string
	// Source says where, for the line the commands print.
	Source string
}

// readCurrent decides what "current" is. With --template or
// --template-configmap, it is what they give. Otherwise it is the
// configuration the profile's installed admission policy carries (the
// cluster's truth: the sidecar new Pods get), and without one the embedded
// default; the other template flags (--image, --native, ...) apply over
// either. name, when not empty, is the policy to read (check's --name);
// otherwise the one policy kubectl-inject installed for the profile.
//
// A policy that cannot be read is an error when strict (restart: rolling
// the fleet to a guess is worse than stopping); otherwise (status, check)
// it is a warning, and the default stands.
//
// Unless whole (check, which compiles the policy again), the policy's
// selection of Pods (namespaces, kinds, API groups, a label selector) is
// left out: it chose Pods at admission, while status and restart also
// judge the workloads injected through their templates, which chose
// themselves.
//
// With --static DIR, the policies of the static manifests in DIR count as
// installed too (the API lists no static object), once the API server's
// metrics say it runs those files (metrics, when not nil). Without it, an
// API server that runs static mutating policies while the API lists none
// for the profile is a warning (strict: an error), naming --static.
func readCurrent(ctx context.Context, flags *config.Flags, client dynamic.Interface, metrics metricsReader, lookup inject.ConfigMapLookup, name string, strict, whole bool, warn func(string)) (*current, error) {
	if flags.TemplateGiven() {
		tmpl, settings, err := flags.LoadTemplate(lookup)
		if err != nil {
			return nil, err
		}
		return &current{Template: tmpl, Settings: settings, Source: "the template flags"}, nil
	}
	installed, policy, err := installedConfig(ctx, client, flags.Profile, name, flags.StaticDir)
	if err == nil && metrics != nil {
		err = checkServed(ctx, metrics, flags.StaticDir, installed, &policy)
	}
	if err != nil {
		if strict {
			return nil, fmt.Errorf("%w (give --template to say what current is)", err)
		}
		warn(err.Error() + "; current is the embedded default")
		installed, policy = nil, found{}
	}
	if installed != nil && !whole {
		sel := &installed.Settings.Policy
		sel.Namespaces, sel.ExcludeNamespaces, sel.Kinds, sel.APIGroups, sel.Selector = nil, nil, nil, nil, ""
	}
	tmpl, settings, err := flags.LoadTemplateOver(installed, lookup)
	if err != nil {
		return nil, err
	}
	c := &current{Template: tmpl, Settings: settings, Policy: policy.name, Source: "the embedded default"}
	if installed != nil {
		c.Source = policy.source()
	}
	return c, nil
}

// checkServed checks, for a policy read from static manifests, that the
// API server runs those files, and adds it to the source; for no
// installed policy, it checks that the API server runs no static one the
// flags did not point at.
func checkServed(ctx context.Context, metrics metricsReader, staticDir string, installed *inject.Config, policy *found) error {
	switch {
	case installed != nil && policy.file != "":
		note, err := staticServed(ctx, metrics, staticDir)
		if err != nil {
			return err
		}
		policy.note = note
	case installed == nil && staticDir == "":
		// A cluster whose /metrics this user may not read says nothing.
		if hash, err := servedStaticHash(ctx, metrics); err == nil && hash != "" {
			return fmt.Errorf("the API server runs static mutating admission policies (%s), which the API does not list: give --static DIR, the directory kubectl inject policy --static wrote", hash)
		}
	}
	return nil
}

// found is an installed mutating policy: its name, and for a static one
// its file and whether the API server runs it.
type found struct {
	name, file, note string
	cfg              *inject.Config
	// template is the hash of the template the policy injects: equal
	// for policies that agree.
	template string
}

func (f found) source() string {
	if f.file == "" {
		return "mutatingadmissionpolicy/" + f.name
	}
	s := "static manifest " + f.file
	if f.note != "" {
		s += "; " + f.note
	}
	return s
}

// installedConfig finds the profile's installed mutating policy and
// returns the configuration it carries, or nil when none is installed
// (or the API server serves no MutatingAdmissionPolicy). A policy from a
// version that carried no configuration counts as a built-in default
// (this version's or an earlier one's) when its template hash is that
// default's, and is an error otherwise.
//
// With staticDir, the static manifests there count too; a policy named
// name matches name.static.k8s.io there. Policies of the profile that
// inject the same template agree: the first is returned, a static one
// before the API's.
func installedConfig(ctx context.Context, client dynamic.Interface, profile, name, staticDir string) (*inject.Config, found, error) {
	list, err := listInstalledPolicies(ctx, client, staticDir)
	if err != nil {
		return nil, found{}, err
	}
	var matches []found
	for _, item := range list {
		if name != "" && item.GetName() != name && item.GetName() != name+admission.StaticSuffix {
			continue
		}
		ann := item.GetAnnotations()
		cfg, err := admission.InstalledConfig(item.GetName(), ann)
		if err != nil {
			return nil, found{}, err
		}
		if cfg == nil {
			// Compiled before policies carried their configuration: its
			// profile is in its name only.
			if item.GetName() != admission.ObjectName(admission.DefaultName, profile) && name == "" {
				continue
			}
			settings := inject.Settings{Profile: profile}
			tmpl := inject.BuiltinTemplate(ann[admission.TemplateHashAnnotation], settings)
			if tmpl == nil {
				return nil, found{}, fmt.Errorf("mutatingadmissionpolicy/%s injects template %s but does not say which (an older kubectl-inject compiled it): apply it again with kubectl inject policy --apply and its flags",
					item.GetName(), ann[admission.TemplateHashAnnotation])
			}
			cfg = &inject.Config{Template: tmpl, Settings: settings}
		}
		if cfg.Settings.Profile != profile {
			continue
		}
		matches = append(matches, found{name: item.GetName(), file: ann[staticFileKey], cfg: cfg, template: ann[admission.TemplateHashAnnotation]})
	}
	if len(matches) == 0 {
		return nil, found{}, nil
	}
	// The files --static points at come first: the source line then names
	// them.
	rank := func(f found) int {
		if f.file != "" {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(matches, func(a, b found) int { return cmp.Compare(rank(a), rank(b)) })
	if agree(matches) {
		return matches[0].cfg, matches[0], nil
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.source()
	}
	sort.Strings(names)
	return nil, found{}, fmt.Errorf("%d policies are installed for %s (%s): they disagree on what current is", len(names), naming.ProfileName(profile), strings.Join(names, ", "))
}

// currentLine is what status and restart say "current" is: in JSON, and
// as the first line on stderr.
type currentLine struct {
	Profile  string `json:"profile,omitempty"`
	Template string `json:"template"`
	Source   string `json:"source"`
}

func currentOf(in *inject.Injector, c *current) currentLine {
	return currentLine{Profile: in.Profile(), Template: in.TemplateHash(), Source: c.Source}
}

func (l currentLine) String() string {
	return fmt.Sprintf("current: template %s of %s (%s)", l.Template, naming.ProfileName(l.Profile), l.Source)
}

// agree reports whether the policies inject one template (the hash
// covers what the settings do to it): a policy installed both through the
// API and as static manifests, or under two names, for other namespaces.
func agree(matches []found) bool {
	for _, m := range matches[1:] {
		if m.template != matches[0].template {
			return false
		}
	}
	return true
}

// listInstalledPolicies lists the mutating policies kubectl-inject
// installed: none when the API server serves no MutatingAdmissionPolicy.
// With staticDir, those of the static manifests there follow.
func listInstalledPolicies(ctx context.Context, client dynamic.Interface, staticDir string) ([]unstructured.Unstructured, error) {
	var items []unstructured.Unstructured
	list, err := client.Resource(policyResource(admission.KindMutatingPolicy)).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + admission.FieldManager})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("cannot read the installed admission policies: %s", readError(err))
	default:
		items = list.Items
	}
	if staticDir != "" {
		static, err := readStaticPolicies(staticDir)
		if err != nil {
			return nil, err
		}
		items = append(items, static...)
	}
	return items, nil
}
