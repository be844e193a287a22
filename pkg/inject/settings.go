package inject

import (
	"fmt"
	"strings"
)

// Mode chooses which objects are injected by default.
type Mode string

// Modes.
const (
	// OptOut injects every selected object unless it is annotated
	// sidecar.kinject.dev/inject: "false".
	OptOut Mode = "opt-out"
	// OptIn injects only objects annotated sidecar.kinject.dev/inject: "true"
	// (or the seed's initializer.kubernetes.io/envoy: "true").
	OptIn Mode = "opt-in"
)

// Settings are everything besides the template: which objects to inject
// and how.
type Settings struct {
	Policy Policy
	// Native, when set, moves the template's sidecars to native form (true)
	// or to classic containers (false).
	Native *bool
	// Image, when set, replaces the image of the template's first sidecar.
	Image string
	// Paths adds pod-template locations for kinds the injector does not know.
	Paths []PodTemplatePath
	// Strict makes the template's privilege warnings errors.
	Strict bool
	// Profile names the sidecar profile: its status record and annotations
	// are NAME.sidecar.kinject.dev/*. "" is the default profile
	// (sidecar.kinject.dev/*).
	Profile string
	// AllProfiles makes uninject remove every profile's injection.
	AllProfiles bool
	// TemplateConfigMap names a ConfigMap holding the template
	// ("[NAMESPACE/]NAME[:KEY]"); front ends resolve it.
	TemplateConfigMap string
}

// settingKey folds "inject-host-network", "injectHostNetwork" and
// "inject_host_network" into one spelling.
func settingKey(key string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(key))
}

// Set applies one setting given as a string, as kpt fn eval's key=value
// arguments and SidecarInjection scalars give them. Lists are comma-separated.
func (s *Settings) Set(key, value string) error {
	switch settingKey(key) {
	case "mode":
		m := Mode(value)
		if m != OptIn && m != OptOut {
			return fmt.Errorf("%q is not a mode (want %s or %s)", value, OptOut, OptIn)
		}
		s.Policy.Mode = m
	case "native":
		b, err := parseBool(key, value)
		if err != nil {
			return err
		}
		s.Native = &b
	case "image":
		s.Image = value
	case "injecthostnetwork":
		b, err := parseBool(key, value)
		if err != nil {
			return err
		}
		s.Policy.InjectHostNetwork = b
	case "selector":
		s.Policy.Selector = value
	case "strict":
		b, err := parseBool(key, value)
		if err != nil {
			return err
		}
		s.Strict = b
	case "profile":
		if err := ValidateProfile(value); err != nil {
			return err
		}
		s.Profile = value
	case "allprofiles":
		b, err := parseBool(key, value)
		if err != nil {
			return err
		}
		s.AllProfiles = b
	case "templateconfigmap":
		if _, err := ParseTemplateRef(value); err != nil {
			return err
		}
		s.TemplateConfigMap = value
	default:
		return s.SetList(key, splitList(value))
	}
	return nil
}

// SetList applies a list setting: kinds, apiGroups, namespaces,
// excludeNamespaces or
// podTemplatePaths.
func (s *Settings) SetList(key string, values []string) error {
	switch settingKey(key) {
	case "kinds":
		s.Policy.Kinds = values
	case "apigroups":
		s.Policy.APIGroups = values
	case "namespaces":
		s.Policy.Namespaces = values
	case "excludenamespaces":
		s.Policy.ExcludeNamespaces = values
	case "podtemplatepaths":
		for _, v := range values {
			p, err := ParsePodTemplatePath(v)
			if err != nil {
				return err
			}
			s.Paths = append(s.Paths, p)
		}
	default:
		return fmt.Errorf("unknown setting %q (known: mode, native, image, kinds, apiGroups, namespaces, excludeNamespaces, selector, injectHostNetwork, podTemplatePaths, templateConfigMap, strict, profile, allProfiles)", key)
	}
	return nil
}

func splitList(value string) []string {
	var out []string
	for _, v := range strings.Split(value, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
