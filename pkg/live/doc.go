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
// The Patcher works on one profile, the Injector's: its status record is
// NAME.sidecar.kinject.dev/status (sidecar.kinject.dev/status for the
// default profile), and other profiles' sidecars are left as they are. One
// field manager applies for every profile, so a server-side apply holds
// the fields of every profile still injected. When only an object's
// override annotations changed, the PATCH holds only the sidecar values
// that changed and the record, not the whole sidecar again (which would
// also undo what the server added to it).
//
// A Pod owned by a controller is resolved through its ownerReferences to the
// workload that owns it (Pod -> ReplicaSet -> Deployment). A bare Pod cannot
// gain containers once created, so it is refused unless Recreate is set, in
// which case it is deleted and created again with the sidecar. A Job's pod
// template is immutable, so a Job is refused with an explanation.
//
// Nothing is rolled out that cannot start: with References set, an
// injection whose sidecar needs a ConfigMap, Secret or PersistentVolumeClaim
// that the object's namespace lacks fails with inject.ReasonMissingReference
// before anything is sent (a ReferenceChecker looks each one up once per
// command).
//
// Process never stops at the first failure: it returns one Result per
// target, and the caller decides how to report them.
package live
