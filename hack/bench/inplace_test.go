package main

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func inplaceSample() *inplaceResult {
	return &inplaceResult{
		Deployments: 10, Replicas: 100, MaxInFlight: 100, Nodes: 3, Budget: 25,
		BudgetWhy: "spec.strategy.rollingUpdate.maxUnavailable (default 25%) of 100",
		InPlace: inplacePhase{
			Wall: 20 * time.Second, Requests: map[string]int{"PATCH": 1000, "WATCH": 3, "LIST": 3},
			Server: requests{All: 3000}, Kept: 1000, OnNewImage: 1000, Pods: 1000,
		},
		Rollout: inplacePhase{
			Wall: 40 * time.Second, Requests: map[string]int{"GET": 40, "PATCH": 10, "WATCH": 10},
			Server: requests{All: 9000}, Recreated: 1000, OnNewImage: 1000, Pods: 1000,
		},
		WorkloadSeconds: []float64{3, 1, 2},
		Strategies:      map[string]int{"in-place/in-place": 10},
	}
}

// row is the cells of the table's row whose first cell is name.
func row(t *testing.T, tb *table, name string) []string {
	t.Helper()
	for _, r := range tb.rows {
		if r[0] == name {
			return r
		}
	}
	t.Fatalf("no row %q in\n%s", name, tb)
	return nil
}

func TestInplaceTable(t *testing.T) {
	tb := inplaceTable(inplaceSample())
	for name, want := range map[string][]string{
		"wall time":                     {"20.0 s", "40.0 s", "0.50x"},
		"Pods per second":               {"50.0", "25.0", "2.00x"},
		"client requests per Pod":       {"1.006", "0.060", "16.77x"},
		"all clients' requests per Pod": {"3.00", "9.00", "0.33x"},
		"Pods recreated (new UID)":      {"0", "1,000", ""},
	} {
		got := row(t, tb, name)[1:]
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestInplaceChecks(t *testing.T) {
	s := inplaceSample()
	for _, c := range inplaceChecks(s) {
		if !c.met {
			t.Errorf("%s: not met (%s)", c.what, c.measured)
		}
	}
	// one Pod recreated by the upgrade in place, one left by the rollout
	s.InPlace.Recreated, s.InPlace.Kept = 1, 999
	s.Rollout.OldLeft = 1
	failed := map[string]bool{}
	for _, c := range inplaceChecks(s) {
		if !c.met {
			failed[c.what] = true
		}
	}
	if !failed["in place: no Pod recreated"] || !failed["rollout restart: every Pod recreated"] || len(failed) != 2 {
		t.Errorf("failed checks %v", failed)
	}
}

func TestInplaceSection(t *testing.T) {
	if inplaceSection(nil) != "" {
		t.Error("a part that did not run has a section")
	}
	s := inplaceSample()
	s.InPlace.Server.Calls = map[call]int{
		{Verb: "GET", Resource: "pods"}: 1000, {Verb: "PATCH", Resource: "pods"}: 1000,
		{Verb: "LIST", Group: "policy", Resource: "poddisruptionbudgets"}: 40,
	}
	s.InPlace.FirstStarted = 8 * time.Second
	md := inplaceSection(s)
	for _, want := range []string{"started after 8.00 s", "1,000 GETs and 1,000 PATCHes of Pods and 40 LISTs", "## 11. In place", "--max-in-flight 100", "25 Pods at a time", "min 1.0, median 2.0, max 3.0", "in-place/in-place 10"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
}

func TestInplaceNodes(t *testing.T) {
	for pods, want := range map[int]int{1: 3, 1000: 3, 1500: 3, 1501: 4, 5000: 10} {
		if got := inplaceNodes(pods); got != want {
			t.Errorf("inplaceNodes(%d) = %d, want %d", pods, got, want)
		}
	}
}

func TestTopCalls(t *testing.T) {
	m := map[call]int{
		{Verb: "PATCH", Resource: "pods"}:                        1000,
		{Verb: "PATCH", Resource: "pods", Subresource: "status"}: 1000,
		{Verb: "GET", Resource: "pods"}:                          3,
		{Verb: "LIST", Resource: "pods"}:                         2,
	}
	if got, want := topCalls(m, 2), "PATCH pods 1,000, PATCH pods/status 1,000, others 5"; got != want {
		t.Errorf("topCalls = %q, want %q", got, want)
	}
	if got := topCalls(nil, 2); got != "none" {
		t.Errorf("topCalls(nil) = %q", got)
	}
}

func TestOnImage(t *testing.T) {
	const img = "registry.example/envoy:b"
	pod := func(spec, status string, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "envoy", Image: spec}}, Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			Status: corev1.PodStatus{
				Conditions:            []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}},
				InitContainerStatuses: []corev1.ContainerStatus{{Name: "envoy", Image: status}},
			},
		}
	}
	for _, c := range []struct {
		p    *corev1.Pod
		want bool
	}{
		{pod(img, img, corev1.ConditionTrue), true},
		{pod(img, "envoy:a", corev1.ConditionTrue), false}, // patched, the kubelet not there yet
		{pod(img, img, corev1.ConditionFalse), false},
		{pod("envoy:a", "envoy:a", corev1.ConditionTrue), false},
	} {
		if got := onImage(c.p, img); got != c.want {
			t.Errorf("onImage(spec %s, status %s, ready %s) = %v", c.p.Spec.InitContainers[0].Image, c.p.Status.InitContainerStatuses[0].Image, c.p.Status.Conditions[0].Status, got)
		}
	}
}

func TestPendingStats(t *testing.T) {
	var d []time.Duration
	for i := 10; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Second)
	}
	if got, want := pendingStats(d), "6.00 s / 9.00 s / 10.0 s"; got != want {
		t.Errorf("pendingStats = %q, want %q", got, want)
	}
	if got := pendingStats(nil); got != "n/a" {
		t.Errorf("pendingStats(nil) = %q", got)
	}
	// 10 Pods of 2 s each over 4 s: 5 at once
	if got := meanAtOnce([]time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}, 4*time.Second); got != 5 {
		t.Errorf("meanAtOnce = %v, want 5", got)
	}
}
