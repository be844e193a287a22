package admission_test

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	kadmission "github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/inprocess"
)

// serverPolicy is a compiled policy as the API server's plugins hold it
// (pkg/admission/inprocess).
type serverPolicy struct{ *inprocess.Policy }

// admitted is what one Pod's creation gives under the policy.
type admitted struct {
	pod           *corev1.Pod
	matched       bool
	warnings      []string
	mutationError error
}

func loadServerPolicy(p *kadmission.Policy) (*serverPolicy, error) {
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	return loadServerObjects(objs)
}

func loadServerObjects(objs [][]byte) (*serverPolicy, error) {
	sp, err := inprocess.Load(objs)
	if err != nil {
		return nil, err
	}
	return &serverPolicy{sp}, nil
}

func (sp *serverPolicy) admit(pod *corev1.Pod, param runtime.Object) (*admitted, error) {
	r, err := sp.Admit(pod, param)
	if err != nil {
		return nil, err
	}
	return &admitted{pod: r.Pod, matched: r.Matched, warnings: r.Warnings, mutationError: r.MutationError}, nil
}

func decodePod(manifest []byte) (*corev1.Pod, error) { return inprocess.DecodePod(manifest) }
