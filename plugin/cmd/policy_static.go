package cmd

import (
	"fmt"
	"path/filepath"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/staticdir"
	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

// runStatic writes the policy as static admission manifests in
// --static's directory (or, with --check, compares that directory with them), and
// prints the AdmissionConfiguration that loads them.
func (o *PolicyOptions) runStatic() error {
	_, p, err := o.compileWith(admission.CompileStatic)
	if err != nil {
		return err
	}
	files, err := p.StaticFiles()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(o.Flags.StaticDir)
	if err != nil {
		return err
	}
	if o.Check {
		// A stale directory is exit 1 with its diff, as --diff; a set
		// that would not load is an error, whatever the directory holds.
		if err := staticdir.Validate(files); err != nil {
			return err
		}
		stale, err := staticdir.Check(o.Out, dir, files, textdiff.Options{Color: o.Flags.ColorFor(o.Out)})
		if err != nil {
			return err
		}
		if stale > 0 {
			return config.DiffChanged(stale, "static manifests")
		}
		fmt.Fprintf(o.ErrOut, "%s: the static policy %s is current (%d files)\n", dir, p.Name, len(files))
		return nil
	}
	written, err := staticdir.Write(dir, files)
	for _, w := range written {
		fmt.Fprintf(o.ErrOut, "%s written\n", w)
	}
	if err != nil {
		return err
	}
	if len(written) == 0 {
		fmt.Fprintf(o.ErrOut, "%s: the static policy %s is current (%d files); nothing written\n", dir, p.Name, len(files))
	}
	fmt.Fprintf(o.ErrOut, "Every API server loads the files from its --admission-control-config-file (Kubernetes 1.37+), with these plugins:\n")
	_, err = o.Out.Write(admission.StaticConfiguration(dir))
	return err
}
