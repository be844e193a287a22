package admission_test

import (
	"testing"

	"k8s.io/apiserver/pkg/cel/environment"
)

// TestMixedLiteralsNeedDyn guards why a template item's literal wraps
// every value of a map or list whose values differ in type in dyn()
// (typedLiterals): the API server's CEL environment checks aggregate literals
// as homogeneous, and a dyn() on some of the values is not enough. When
// a version of the API server accepts the bare literals, this fails, and
// the wrappers can go.
func TestMixedLiteralsNeedDyn(t *testing.T) {
	t.Parallel()
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expression string
		compiles   bool
	}{
		{`{"name": dyn("envoy"), "ports": dyn([dyn({"containerPort": dyn(10000), "protocol": dyn("TCP")})])}`, true},
		{`[dyn(1), dyn("a")]`, true},
		{`{"name": "envoy", "ports": [{"containerPort": 10000, "protocol": "TCP"}]}`, false},
		{`{"name": dyn("envoy"), "port": 10000}`, false},
		{`[dyn(1), "a"]`, false},
		{`{"cpu": "1", "memory": "512Mi"}`, true},            // one type: no dyn()
		{`{"a": dyn({"b": {"c": 5}}), "d": dyn("x")}`, true}, // one value: no dyn()
		{`{"a": dyn([{"name": "x", "value": "y"}]), "d": dyn(1)}`, true},
	} {
		_, issues := env.Compile(tc.expression)
		if got := issues.Err() == nil; got != tc.compiles {
			t.Errorf("%s: compiles = %v, want %v (%v)", tc.expression, got, tc.compiles, issues.Err())
		}
	}
}
