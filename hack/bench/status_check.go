package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// checkStatus checks the JSON of kubectl inject status -A against what the
// part created: one row per Deployment (no Pod rows: every Pod has a
// controller), current in the injected namespace and not-injected in the
// other, each with its Pods counted and none behind (the Pods were made
// from the template as it is).
func (r *statusResult) checkStatus(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r.StatusBytes = len(data)
	var list struct {
		Kind  string      `json:"kind"`
		Items []fleet.Row `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("status -A -o json: %w", err)
	}
	r.States = map[string]int{}
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	if list.Kind != "InjectionStatusList" {
		bad("kind %q, want InjectionStatusList", list.Kind)
	}
	deployments := 0
	for _, row := range list.Items {
		r.States[row.State]++
		r.PodsCounted += row.Pods
		r.PodsBehind += row.PodsBehind
		if row.Kind != "Deployment" {
			bad("unexpected row %s/%s (%s, bare %v)", row.Namespace, row.Ref(), row.State, row.Bare)
			continue
		}
		deployments++
		want := fleet.NotInjected
		if row.Namespace == r.InjectedNs {
			want = fleet.Current
		}
		if row.State != want || row.Pods != statusPodsPer || row.PodsBehind != 0 {
			bad("%s/%s: state %s, pods %d, podsBehind %d; want %s, %d, 0", row.Namespace, row.Ref(), row.State, row.Pods, row.PodsBehind, want, statusPodsPer)
		}
	}
	if len(list.Items) != r.Deployments || deployments != r.Deployments {
		bad("%d items, %d of them Deployments; want %d Deployments and nothing else", len(list.Items), deployments, r.Deployments)
	}
	if r.States[fleet.Current] != r.Injected || r.States[fleet.NotInjected] != r.Deployments-r.Injected {
		bad("%d current and %d not-injected, want %d and %d", r.States[fleet.Current], r.States[fleet.NotInjected], r.Injected, r.Deployments-r.Injected)
	}
	if r.PodsCounted != r.Pods || r.PodsBehind != 0 {
		bad("pods sum to %d (want %d), podsBehind to %d (want 0)", r.PodsCounted, r.Pods, r.PodsBehind)
	}
	if len(problems) > 0 {
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("... %d more", len(problems)-5))
		}
		return fmt.Errorf("kubectl inject status -A -o json is not what was created:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// checkKubectl checks that kubectl get printed every Deployment and Pod.
func (r *statusResult) checkKubectl(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r.KubectlBytes = len(data)
	var list struct {
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("kubectl get -o json: %w", err)
	}
	r.KubectlItems = map[string]int{}
	for _, it := range list.Items {
		r.KubectlItems[it.Kind]++
	}
	if r.KubectlItems["Deployment"] != r.Deployments || r.KubectlItems["Pod"] != r.Pods || len(list.Items) != r.Deployments+r.Pods {
		return fmt.Errorf("kubectl get deploy,pods -A printed %v, want %d Deployments and %d Pods", r.KubectlItems, r.Deployments, r.Pods)
	}
	return nil
}
