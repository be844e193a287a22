// Package rollout tests kubectl inject on a cluster that runs its control
// plane (test/cluster with Options.ControlPlane): controllers create the
// Pods through admission, the scheduler binds them to kwok's Nodes, and
// rollouts complete. It checks that Pods made by ReplicaSets and Jobs are
// injected at admission, that live injection of a Deployment, a
// StatefulSet and a DaemonSet rolls every Pod to the sidecar (kubectl
// rollout status completes, BEHIND falls to 0), and kubectl inject
// restart on a fleet: waves bounded by --max-in-flight, a failed rollout
// stopping the run, SIGINT, and a second run completing.
package rollout
