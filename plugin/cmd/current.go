package cmd

import (
	"context"
	"fmt"
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
func readCurrent(ctx context.Context, flags *config.Flags, client dynamic.Interface, lookup inject.ConfigMapLookup, name string, strict, whole bool, warn func(string)) (*current, error) {
	if flags.TemplateGiven() {
		tmpl, settings, err := flags.LoadTemplate(lookup)
		if err != nil {
			return nil, err
		}
		return &current{Template: tmpl, Settings: settings, Source: "the template flags"}, nil
	}
	installed, policy, err := installedConfig(ctx, client, flags.Profile, name)
	if err != nil {
		if strict {
			return nil, fmt.Errorf("%w (give --template to say what current is)", err)
		}
		warn(err.Error() + "; current is the embedded default")
	}
	if installed != nil && !whole {
		sel := &installed.Settings.Policy
		sel.Namespaces, sel.ExcludeNamespaces, sel.Kinds, sel.APIGroups, sel.Selector = nil, nil, nil, nil, ""
	}
	tmpl, settings, err := flags.LoadTemplateOver(installed, lookup)
	if err != nil {
		return nil, err
	}
	c := &current{Template: tmpl, Settings: settings, Policy: policy, Source: "the embedded default"}
	if installed != nil {
		c.Source = "mutatingadmissionpolicy/" + policy
	}
	return c, nil
}

// installedConfig finds the profile's installed mutating policy and
// returns the configuration it carries, or nil when none is installed
// (or the API server serves no MutatingAdmissionPolicy). A policy from a
// version that carried no configuration counts as a built-in default
// (this version's or an earlier one's) when its template hash is that
// default's, and is an error otherwise.
func installedConfig(ctx context.Context, client dynamic.Interface, profile, name string) (*inject.Config, string, error) {
	list, err := listInstalledPolicies(ctx, client)
	if err != nil {
		return nil, "", err
	}
	type found struct {
		name string
		cfg  *inject.Config
	}
	var matches []found
	for _, item := range list {
		if name != "" && item.GetName() != name {
			continue
		}
		ann := item.GetAnnotations()
		cfg, err := admission.InstalledConfig(item.GetName(), ann)
		if err != nil {
			return nil, "", err
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
				return nil, "", fmt.Errorf("mutatingadmissionpolicy/%s injects template %s but does not say which (an older kubectl-inject compiled it): apply it again with kubectl inject policy --apply and its flags",
					item.GetName(), ann[admission.TemplateHashAnnotation])
			}
			cfg = &inject.Config{Template: tmpl, Settings: settings}
		}
		if cfg.Settings.Profile != profile {
			continue
		}
		matches = append(matches, found{item.GetName(), cfg})
	}
	switch len(matches) {
	case 0:
		return nil, "", nil
	case 1:
		return matches[0].cfg, matches[0].name, nil
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = "mutatingadmissionpolicy/" + m.name
	}
	sort.Strings(names)
	return nil, "", fmt.Errorf("%d policies are installed for %s (%s): they disagree on what current is", len(names), naming.ProfileName(profile), strings.Join(names, ", "))
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

// listInstalledPolicies lists the mutating policies kubectl-inject
// installed: none when the API server serves no MutatingAdmissionPolicy.
func listInstalledPolicies(ctx context.Context, client dynamic.Interface) ([]unstructured.Unstructured, error) {
	list, err := client.Resource(policyResource(admission.KindMutatingPolicy)).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + admission.FieldManager})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("cannot read the installed admission policies: %s", readError(err))
	}
	return list.Items, nil
}
