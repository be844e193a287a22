// Package admission tests the admission policy that kubectl inject policy
// compiles, on a real kube-apiserver (v1.37) and etcd: the Pod the API
// server stores after CREATE with the policy installed must equal, field for
// field, the Pod stored after creating kubectl inject --local's output of
// the same manifest; Pods the policy leaves alone must be exactly those the
// core skips or refuses.
package admission
