package node

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The node's network: a bridge of its own with a private pod CIDR. The
// bridge's address is the Pods' gateway, and also the node's IP and the
// kubelet's address (the kubelet refuses a loopback node IP).
const (
	Bridge  = "kinject0"
	PodCIDR = "10.244.0.0/24"
	NodeIP  = "10.244.0.1"
	// forwardComment marks the one iptables rule the node adds.
	forwardComment = "kinject-node: pod to pod on " + Bridge
)

// forwardRule lets Pod-to-Pod traffic through the FORWARD chain, whose
// policy Docker sets to DROP while bridged traffic goes through
// iptables (bridge-nf-call-iptables).
var forwardRule = []string{"FORWARD", "-i", Bridge, "-o", Bridge, "-m", "comment", "--comment", forwardComment, "-j", "ACCEPT"}

// setUpNetwork creates the bridge with the gateway address and lets
// Pod-to-Pod traffic through.
func setUpNetwork() error {
	for _, args := range [][]string{
		{"link", "add", Bridge, "type", "bridge"},
		{"addr", "add", NodeIP + "/24", "dev", Bridge},
		{"link", "set", Bridge, "up"},
	} {
		if err := run("ip", args...); err != nil {
			return fmt.Errorf("create bridge %s: %w", Bridge, err)
		}
	}
	if err := run("iptables", append([]string{"-w", "-I"}, forwardRule...)...); err != nil {
		return fmt.Errorf("allow forwarding on %s: %w", Bridge, err)
	}
	return nil
}

// tearDownNetwork removes the iptables rule (every copy), the veths
// left on the bridge, and the bridge. Missing pieces are no error.
func tearDownNetwork() error {
	// Every copy: a run killed between two starts may have left one.
	for run("iptables", append([]string{"-w", "-D"}, forwardRule...)...) == nil {
	}
	if ports, err := os.ReadDir(filepath.Join("/sys/class/net", Bridge, "brif")); err == nil {
		for _, p := range ports {
			_ = run("ip", "link", "del", p.Name())
		}
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", Bridge)); err == nil {
		if err := run("ip", "link", "del", Bridge); err != nil {
			return fmt.Errorf("delete bridge %s: %w", Bridge, err)
		}
	}
	return nil
}

// writeCNIConfig writes the bridge network's conflist into dir, with
// host-local's leases under ipamDir.
func writeCNIConfig(dir, ipamDir string) error {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "kinject",
		"plugins": []any{map[string]any{
			"type":        "bridge",
			"bridge":      Bridge,
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam": map[string]any{
				"type":    "host-local",
				"dataDir": ipamDir,
				"ranges":  []any{[]any{map[string]any{"subnet": PodCIDR, "gateway": NodeIP}}},
				"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
			},
		}},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode CNI config: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create CNI config dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "10-kinject.conflist"), b, 0o644); err != nil {
		return fmt.Errorf("write CNI config: %w", err)
	}
	return nil
}

// run runs a command; its error carries the command's output.
func run(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
