package cmd

import (
	"testing"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/plugin/local"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestTemplateFlagsEverywhere: every template flag (the ones that say what
// is injected) is taken by inject, policy, status, restart, check and
// explain, with the same type, default and help: one flag set, one
// meaning (TestTemplateFlagsTakeEffect sees each one's effect).
func TestTemplateFlagsEverywhere(t *testing.T) {
	want := pflag.NewFlagSet("template", pflag.ContinueOnError)
	f := config.NewFlags()
	f.AddTemplateFlags(want)
	names := 0
	root := NewCmdInject(genericiooptions.NewTestIOStreamsDiscard(), local.FrontEnd{})
	commands := map[string]*pflag.FlagSet{"inject": root.Flags()}
	for _, c := range root.Commands() {
		commands[c.Name()] = c.Flags()
	}
	want.VisitAll(func(w *pflag.Flag) {
		names++
		for _, cmd := range []string{"inject", "policy", "status", "restart", "check", "explain"} {
			fs := commands[cmd]
			if fs == nil {
				t.Fatalf("no %s command", cmd)
			}
			got := fs.Lookup(w.Name)
			switch {
			case got == nil:
				t.Errorf("%s does not take --%s", cmd, w.Name)
			case got.Value.Type() != w.Value.Type() || got.DefValue != w.DefValue || got.Usage != w.Usage || got.Shorthand != w.Shorthand:
				t.Errorf("%s --%s is %s %q (%q), not the template flag's %s %q (%q)", cmd, w.Name,
					got.Value.Type(), got.DefValue, got.Usage, w.Value.Type(), w.DefValue, w.Usage)
			}
		}
	})
	for _, name := range []string{"template", "template-configmap", "image", "native", "mode", "profile", "strict", "inject-host-network", "exclude-namespaces", "kinds", "pod-template-path"} {
		if want.Lookup(name) == nil {
			t.Errorf("--%s is not a template flag", name)
		}
	}
	if names < 11 {
		t.Fatalf("%d template flags", names)
	}
}
