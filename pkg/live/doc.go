// Package live injects sidecars into objects stored in a Kubernetes API
// server, the declarative way.
//
// A Patcher reads an object, runs the injection core (pkg/inject) on a copy,
// and sends only the difference: a strategic merge patch for kinds built
// into Kubernetes (as the seed Initializer's CreateTwoWayMergePatch did), a
// JSON merge patch for custom kinds, or, with ServerSide, a server-side apply
// of only the injected fields under the Patcher's field manager, so that an
// uninject is an apply that drops them. Every patch carries the
// resourceVersion that was read, so a concurrent writer makes the server
// answer Conflict; the Patcher then reads the object again and retries.
// Nothing is sent when nothing would change.
//
// A Pod owned by a controller is resolved through its ownerReferences to the
// workload that owns it (Pod -> ReplicaSet -> Deployment). A bare Pod cannot
// gain containers once created, so it is refused unless Recreate is set, in
// which case it is deleted and created again with the sidecar. A Job's pod
// template is immutable, so a Job is refused with an explanation.
//
// Process never stops at the first failure: it returns one Result per
// target, and the caller decides how to report them.
package live
