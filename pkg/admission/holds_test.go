package admission

import (
	"testing"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestPodConditionsAsCEL: each kind of the core's pod conditions, as the
// CEL the policy writes; a container condition reads the variable of the
// Pod's containers (every policy declares it: a template always adds one).
func TestPodConditionsAsCEL(t *testing.T) {
	t.Parallel()
	all := expr.Var("allContainers")
	proxies := inject.HasContainer{Names: []string{"a", "b"}}
	for _, c := range []struct {
		name          string
		cond          inject.PodCondition
		allContainers expr.Expr
		want          string
	}{
		{"an annotation's value", inject.AnnotationIs{Key: "k", Value: "True"}, nil,
			`object.metadata.?annotations[?"k"].orValue("").lowerAscii() == "true"`},
		{"an annotation there", inject.HasPodAnnotation{Key: "k"}, nil,
			`has(object.metadata.annotations) && "k" in object.metadata.annotations`},
		{"a field of the spec", inject.SpecIsTrue{Field: "hostPID"}, nil,
			`has(object.spec.hostPID) && object.spec.hostPID`},
		{"a container", proxies, all,
			`variables.allContainers.exists(c, c.name in ["a", "b"])`},
		{"any of", inject.AnyOf{inject.SpecIsTrue{Field: "x"}, inject.HasPodAnnotation{Key: "k"}}, nil,
			`has(object.spec.x) && object.spec.x || has(object.metadata.annotations) && "k" in object.metadata.annotations`},
		{"not", inject.Not{Of: inject.AnnotationIs{Key: "k", Value: "false"}}, nil,
			`object.metadata.?annotations[?"k"].orValue("").lowerAscii() != "false"`},
	} {
		if got := expr.Pretty(holds(c.cond, c.allContainers)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
