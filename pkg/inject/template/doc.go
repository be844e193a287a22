// Package template is what the injector adds: a partial Pod spec
// (containers, initContainers, volumes, the pod template's labels and
// annotations) with its parameters and the ports its sidecars bind.
//
// ParsePartialSpec reads one from its mapping and checks it whole: every
// item named once, every parameter bound to a field the template holds
// (its default read from there), every reserved port owned by a sidecar.
// The Template it returns is never changed afterwards; WithNative,
// WithImage and WithValues (an object's parameter values) return new ones,
// copying only the nodes they change, so one template serves every
// document of a run.
//
// The files, lowest level first: the parameters' types and the grammar of
// their fields (parameter_types.go, parameter_fields.go), a parameter and
// its expression (parameters.go, expression.go), the ports (ports.go), the
// Template itself and its hash (template.go), then what reads the whole
// template: its document form, the objects it references, its bound
// parameters and ports, the parser, the derived templates and the
// warnings about privileges.
//
// The package knows nothing of objects, profiles' records or settings:
// the injector (package inject) applies a template to pod templates, and
// the admission policy compiler (pkg/admission) writes the same template
// into CEL.
package template
