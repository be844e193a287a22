package cmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/staticdir"
	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

// addStaticFlag registers --static for the commands that read the
// installed policy (status, restart, check, explain): the API lists no
// static object, so the files say what a static policy injects.
func addStaticFlag(c *cobra.Command, flags *config.Flags) {
	c.Flags().StringVar(&flags.StaticDir, "static", "", "The directory kubectl inject policy --static wrote (mutating/, validating/): its policy counts as installed, once the API server's metrics say it runs those files (Kubernetes 1.37+)")
}

// checkStatic checks the profile's static policy: with --static, that
// the directory holds what the flags compile and that the API server
// runs it, and whether a policy installed through the API too injects
// the same; without, that the API server runs no static policy the
// check cannot read.
func (o *CheckOptions) checkStatic(ctx context.Context, c *checkClients, p *admission.Policy) {
	const category = "policy"
	dir := o.Policy.Flags.StaticDir
	if dir == "" {
		if hash, err := servedStaticHash(ctx, c.metrics); err == nil && hash != "" {
			o.add(category, checkWarn, fmt.Sprintf("the API server runs static mutating admission policies (%s), which the API does not list", hash),
				"give --static DIR, the directory kubectl inject policy --static wrote, to check them")
		}
		return
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		o.add(category, checkFail, err.Error(), "")
		return
	}
	_, sp, err := o.Policy.compileWith(admission.CompileStatic)
	if err != nil {
		o.add(category, checkFail, "the static policy does not compile: "+err.Error(), "")
		return
	}
	files, err := sp.StaticFiles()
	if err != nil {
		o.add(category, checkFail, err.Error(), "")
		return
	}
	rewrite := fmt.Sprintf("kubectl inject policy --static %s%s on every control-plane node", abs, profileFlag(o.Policy.Flags.Profile))
	stale, err := staticdir.Check(io.Discard, abs, files, textdiff.Options{})
	switch {
	case err != nil:
		o.add(category, checkFail, err.Error(), "")
		return
	case stale == len(files):
		o.add(category, checkWarn, fmt.Sprintf("%s (static) is not in %s", sp.Name, abs), rewrite)
		return
	case stale > 0:
		o.add(category, checkFail, fmt.Sprintf("%s (static) in %s is stale: %d of %d files differ from what the flags compile", sp.Name, abs, stale, len(files)),
			rewrite+" (--check first shows the diff)")
	}
	note, err := staticServed(ctx, c.metrics, abs)
	if err != nil {
		o.add(category, checkFail, fmt.Sprintf("%s (static): %v", sp.Name, err), "")
	} else if stale == 0 {
		o.add(category, checkOK, fmt.Sprintf("%s (static, %s) is current (template %s); %s", sp.Name, abs, sp.TemplateHash, note), "")
	}
	// Installed both ways: each runs on every new Pod; the first to run
	// marks it, and the other then leaves it alone.
	switch {
	case o.apiTemplate == "":
	case o.apiTemplate == sp.TemplateHash:
		o.add(category, checkWarn, fmt.Sprintf("%s is installed both through the API and as static manifests; both inject template %s, so new Pods get the same sidecar", p.Name, sp.TemplateHash),
			"keep one: kubectl inject policy --delete removes the API's")
	default:
		o.add(category, checkFail, fmt.Sprintf("%s is installed both ways, injecting different templates (%s through the API, %s static): a new Pod gets the one that runs first", p.Name, o.apiTemplate, sp.TemplateHash),
			"keep one: kubectl inject policy --delete removes the API's")
	}
}
