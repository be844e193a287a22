package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// lockName is the abstract unix socket that serializes nodes on a
// machine (host paths, cgroups and the bridge are shared): binding it is
// exclusive, the kernel frees it when its process dies, and it leaves no
// file behind.
const lockName = "@kinject-node.lock"

// lock waits until this process holds the machine's node lock.
func lock(ctx context.Context) (net.Listener, error) {
	for {
		l, err := net.Listen("unix", lockName)
		if err == nil {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the node lock (another test run has a node): %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// recordPath is where a running node records what Stop must undo, so
// that the next Start undoes what a killed run left.
const recordPath = "/run/kinject-node.json"

// record is what a node changed: its run and log directories, its
// containerd's socket (its shims name it) and the host as it found it.
type record struct {
	Dir    string    `json:"dir"`
	LogDir string    `json:"logDir"`
	Socket string    `json:"socket"`
	Before *Snapshot `json:"before"`
}

func (r record) write() error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode node record: %w", err)
	}
	if err := os.WriteFile(recordPath, b, 0o600); err != nil {
		return fmt.Errorf("write node record: %w", err)
	}
	return nil
}

// readRecord reads the record a killed run left, or nil.
func readRecord() (*record, error) {
	b, err := os.ReadFile(recordPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read node record: %w", err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode node record %s: %w", recordPath, err)
	}
	return &r, nil
}
