package inject

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
)

// A PodSkip is a pod-level skip: a Pod (or pod template) for which When
// holds is left alone with Reason. The skips are written once, as data:
// the core evaluates When on the YAML (selectPod) and the admission
// policy compiles it to CEL (pkg/admission), so the two cannot disagree
// on which Pods a skip leaves alone.
type PodSkip struct {
	Reason Reason
	// Name is the admission policy's match condition for the skip, named
	// for what a Pod the skip does not leave alone meets
	// ("not-opted-out").
	Name string
	When PodCondition
	// Message is the core's message for a Pod the skip leaves alone;
	// matched is what When matched (the container's name of a
	// HasContainer), "" for the other conditions.
	Message func(matched string) string
}

// A PodCondition is a test on a Pod: one of the types below, and nothing
// else (the admission compiler translates each of them to CEL).
type PodCondition interface{ isPodCondition() }

type (
	// AnnotationIs holds when the value of the annotation Key is Value
	// (lower case), compared without ASCII case, as CEL's lowerAscii. The
	// core reads the pod template's annotation, else the object's (a
	// workload annotated as a whole); at admission the Pod is both.
	AnnotationIs struct{ Key, Value string }
	// HasPodAnnotation holds when the Pod (the pod template) carries the
	// annotation Key, whatever its value.
	HasPodAnnotation struct{ Key string }
	// SpecIsTrue holds when the pod spec's field Field is true.
	SpecIsTrue struct{ Field string }
	// HasContainer holds when a container or an init container is named
	// one of Names; the first such name (containers first) is what it
	// matched.
	HasContainer struct{ Names []string }
	// AnyOf holds when one of its conditions holds.
	AnyOf []PodCondition
	// Not holds when Of does not.
	Not struct{ Of PodCondition }
)

func (AnnotationIs) isPodCondition()     {}
func (HasPodAnnotation) isPodCondition() {}
func (SpecIsTrue) isPodCondition()       {}
func (HasContainer) isPodCondition()     {}
func (AnyOf) isPodCondition()            {}
func (Not) isPodCondition()              {}

// PodSkips are the policy's pod-level skips for profile, in the order the
// core decides them. The seed's annotation opts in the default profile
// only.
func (p Policy) PodSkips(profile string) []PodSkip {
	key := naming.InjectAnnotationFor(profile)
	skips := []PodSkip{{ReasonOptedOut, "not-opted-out", AnnotationIs{key, "false"}, says(key + ` is "false"`)}}
	if p.Mode == OptIn {
		optIn := AnyOf{AnnotationIs{key, "true"}}
		message := fmt.Sprintf(`mode is opt-in and %s is not "true"`, key)
		if profile == "" {
			optIn = append(optIn, AnnotationIs{naming.SeedAnnotation, "true"})
			message = fmt.Sprintf(`mode is opt-in and neither %s nor %s is "true"`, naming.InjectAnnotation, naming.SeedAnnotation)
		}
		skips = append(skips, PodSkip{ReasonNotOptedIn, "opted-in", Not{optIn}, says(message)})
	}
	if !p.InjectHostNetwork {
		skips = append(skips, PodSkip{ReasonHostNetwork, "not-host-network", SpecIsTrue{"hostNetwork"},
			says("the pod uses the host's network; a sidecar would share the node's ports")})
	}
	return append(skips,
		PodSkip{ReasonOtherMesh, "no-other-mesh", HasContainer{OtherMeshProxies()},
			func(proxy string) string { return "the pod already has " + proxy }},
		PodSkip{ReasonMirrorPod, "not-a-mirror-pod", HasPodAnnotation{MirrorPodAnnotation},
			says("the pod is a static pod's mirror (" + MirrorPodAnnotation + "): a sidecar added here would never run")},
	)
}

// says is a message that names nothing matched.
func says(message string) func(string) string { return func(string) string { return message } }

// holds evaluates c on the pod target, and says what it matched.
func (t *podTarget) holds(c PodCondition) (bool, string) {
	switch c := c.(type) {
	case AnnotationIs:
		pod := nodes.ScalarField(nodes.MapValue(t.meta, "annotations"), c.Key)
		if pod == "" {
			pod = nodes.ScalarField(nodes.MapValue(nodes.MapValue(t.obj, "metadata"), "annotations"), c.Key)
		}
		return ascii.EqualFold(pod, c.Value), ""
	case HasPodAnnotation:
		return nodes.MapValue(nodes.MapValue(t.meta, "annotations"), c.Key) != nil, ""
	case SpecIsTrue:
		return nodes.ScalarField(t.spec, c.Field) == "true", ""
	case HasContainer:
		for _, list := range []string{"containers", "initContainers"} {
			for _, name := range nodes.ItemNames(nodes.MapValue(t.spec, list)) {
				for _, want := range c.Names {
					if name == want {
						return true, name
					}
				}
			}
		}
		return false, ""
	case AnyOf:
		for _, each := range c {
			if ok, matched := t.holds(each); ok {
				return true, matched
			}
		}
		return false, ""
	case Not:
		ok, _ := t.holds(c.Of)
		return !ok, ""
	}
	panic(fmt.Sprintf("inject: no evaluation of the pod condition %T", c))
}
