package node_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/test/cluster"
	"github.com/kinject/kubectl-inject/test/node"
)

var (
	c *cluster.Cluster
	n *node.Node
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(testbin.Run(m))
	}
	begin := time.Now()
	c = cluster.MustStartWith(cluster.Options{NodeName: node.Name})
	n = node.MustStart(c, c.Stop)
	if n.Skipped() == "" {
		fmt.Fprintf(os.Stderr, "node: control plane and node Ready in %s (the node's start, images built and imported: %s)\n",
			time.Since(begin).Round(100*time.Millisecond), n.StartTime.Round(100*time.Millisecond))
	}
	code := testbin.Run(m)
	if code != 0 && n.Skipped() == "" {
		n.KeepLogs = true
		n.DumpLogs(os.Stderr, 40)
	}
	stopped := time.Now()
	stopErr := n.Stop()
	if n.Skipped() == "" {
		fmt.Fprintf(os.Stderr, "node: stopped in %s\n", time.Since(stopped).Round(100*time.Millisecond))
		// The host is compared once the node is gone, which no test
		// inside m.Run can see: it runs as a test of its own here,
		// whatever -run selects, since every run starts a node.
		all := func(string, string) (bool, error) { return true, nil }
		if !testing.RunTests(all, []testing.InternalTest{{
			Name: "TestStopLeavesHostAsFound",
			F:    func(t *testing.T) { stopLeavesHostAsFound(t, stopErr) },
		}}) {
			code = 1
		}
	}
	n.Release()
	os.Exit(c.Finish(code))
}

// stopLeavesHostAsFound checks that Stop restored everything the node
// changed, as Start found it: mounts, cgroups, links and routes, every
// iptables table (IPv4 and IPv6), sysctls, the contents of the host paths
// and container processes. The node lock is still held: no other run's
// node changes the host meanwhile.
func stopLeavesHostAsFound(t *testing.T, stopErr error) {
	if stopErr != nil {
		t.Errorf("stop: %v", stopErr)
	}
	after, err := node.TakeSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range n.Before.Diff(after) {
		t.Errorf("the host is not as the node found it: %s", d)
	}
	if _, err := os.Stat(n.Dir); !os.IsNotExist(err) {
		t.Errorf("the node's directory %s is left (stat: %v)", n.Dir, err)
	}
}
