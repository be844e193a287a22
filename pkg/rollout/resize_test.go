package rollout

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

// defaultResources is the default template's resources block, which
// resized replaces.
const defaultResources = `  resources:
    limits:
      cpu: 1000m
      memory: 512Mi
    requests:
      cpu: 100m
      memory: 64Mi
`

// resized is the default template, native, with image and the sidecar's
// requests and limits (cpu, memory) given in place of its own, in its
// resources block and its parameters' defaults alike; extraLimit is one
// more line of limits ("" for none).
func resized(t *testing.T, image, reqCPU, reqMem, limCPU, limMem, extraLimit string) *inject.Injector {
	t.Helper()
	text := inject.DefaultTemplateYAML()
	block := "  resources:\n    limits:\n      cpu: " + limCPU + "\n      memory: " + limMem + "\n" + extraLimit +
		"    requests:\n      cpu: " + reqCPU + "\n      memory: " + reqMem + "\n"
	for _, r := range [][2]string{
		{defaultResources, block},
		{"cpu-request\n  field: containers[envoy].resources.requests.cpu\n  type: quantity\n  default: 100m", "cpu-request\n  field: containers[envoy].resources.requests.cpu\n  type: quantity\n  default: " + reqCPU},
		{"memory-request\n  field: containers[envoy].resources.requests.memory\n  type: quantity\n  default: 64Mi", "memory-request\n  field: containers[envoy].resources.requests.memory\n  type: quantity\n  default: " + reqMem},
		{"cpu-limit\n  field: containers[envoy].resources.limits.cpu\n  type: quantity\n  default: 1000m", "cpu-limit\n  field: containers[envoy].resources.limits.cpu\n  type: quantity\n  default: " + limCPU},
		{"memory-limit\n  field: containers[envoy].resources.limits.memory\n  type: quantity\n  default: 512Mi", "memory-limit\n  field: containers[envoy].resources.limits.memory\n  type: quantity\n  default: " + limMem},
	} {
		if !strings.Contains(text, r[0]) {
			t.Fatalf("the default template does not hold\n%s", r[0])
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	tmpl, err := inject.ParseTemplate([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	native := true
	in, err := inject.New(tmpl, inject.Settings{Image: image, Native: &native})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// guaranteedApp gives the Pod's app container requests equal to limits.
func guaranteedApp(obj map[string]any) {
	c := obj["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["resources"] = map[string]any{
		"limits":   map[string]any{"cpu": "500m", "memory": "128Mi"},
		"requests": map[string]any{"cpu": "500m", "memory": "128Mi"},
	}
}

// TestDecideResize: a sidecar whose cpu and memory change is upgraded in
// place through a resize as long as the Pod keeps its QoS class; any
// other resource, or a change of class, recreates the Pod.
func TestDecideResize(t *testing.T) {
	t.Parallel()
	bigger := func(image string) *inject.Injector { return resized(t, image, "200m", "128Mi", "2", "1Gi", "") }
	guaranteed := func(cpu, memory string) *inject.Injector { return resized(t, "envoy:a", cpu, memory, cpu, memory, "") }
	for _, tc := range []struct {
		name       string
		was, now   *inject.Injector
		edit       func(map[string]any)
		wantReason reason.Code
		wantMsg    string
		wantImages int
		wantTo     string
	}{
		{"cpu and memory, Burstable stays Burstable", injector(t, "envoy:a", true), bigger("envoy:a"), nil,
			"", "", 0, "requests cpu=200m,memory=128Mi; limits cpu=2,memory=1Gi"},
		{"resources and image", injector(t, "envoy:a", true), bigger("envoy:b"), nil,
			"", "", 1, "requests cpu=200m,memory=128Mi; limits cpu=2,memory=1Gi"},
		{"Guaranteed stays Guaranteed", guaranteed("200m", "128Mi"), guaranteed("300m", "256Mi"), guaranteedApp,
			"", "", 0, "requests cpu=300m,memory=256Mi; limits cpu=300m,memory=256Mi"},
		{"Guaranteed would become Burstable", guaranteed("200m", "128Mi"), bigger("envoy:a"), guaranteedApp,
			ReasonNotImageOnly, "QoS class from Guaranteed to Burstable", 0, ""},
		{"Burstable would become Guaranteed", injector(t, "envoy:a", true), guaranteed("200m", "128Mi"), guaranteedApp,
			ReasonNotImageOnly, "QoS class from Burstable to Guaranteed", 0, ""},
		{"a request cannot be removed", injector(t, "envoy:a", true), bigger("envoy:a"), func(obj map[string]any) {
			c := obj["spec"].(map[string]any)["initContainers"].([]any)[0].(map[string]any)
			c["resources"].(map[string]any)["requests"].(map[string]any)["ephemeral-storage"] = "1Gi"
		}, ReasonNotImageOnly, "spec.initContainers[envoy].resources.requests.ephemeral-storage changes", 0, ""},
		{"a node that does not report resources", injector(t, "envoy:a", true), bigger("envoy:a"), func(obj map[string]any) {
			obj["status"] = map[string]any{"containerStatuses": []any{map[string]any{"name": "app", "state": map[string]any{"running": map[string]any{}}}}}
		}, ReasonNotImageOnly, "its node does not report its containers' resources", 0, ""},
		{"a node that reports resources", injector(t, "envoy:a", true), bigger("envoy:a"), func(obj map[string]any) {
			obj["status"] = map[string]any{"containerStatuses": []any{map[string]any{"name": "app", "state": map[string]any{"running": map[string]any{}}, "resources": map[string]any{}}}}
		}, "", "", 0, "requests cpu=200m,memory=128Mi; limits cpu=2,memory=1Gi"},
		{"a Windows Pod", injector(t, "envoy:a", true), bigger("envoy:a"), func(obj map[string]any) {
			obj["spec"].(map[string]any)["os"] = map[string]any{"name": "windows"}
		}, ReasonNotImageOnly, "a Windows Pod cannot be resized", 0, ""},
		{"ephemeral storage cannot be resized", injector(t, "envoy:a", true), resized(t, "envoy:a", "100m", "64Mi", "1000m", "512Mi", "      ephemeral-storage: 1Gi\n"), nil,
			ReasonNotImageOnly, "spec.initContainers[envoy].resources.limits.ephemeral-storage changes", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := DecideUpgrade(tc.now, injectedPod(t, tc.was, tc.edit))
			if u.Reason != tc.wantReason || !strings.Contains(u.Message, tc.wantMsg) {
				t.Fatalf("reason %q (%s), want %q (%s)", u.Reason, u.Message, tc.wantReason, tc.wantMsg)
			}
			if tc.wantReason != "" {
				return
			}
			if len(u.Images) != tc.wantImages {
				t.Errorf("images %+v, want %d", u.Images, tc.wantImages)
			}
			if len(u.Resources) != 1 || u.Resources[0].Container != "envoy" || !u.Resources[0].Init {
				t.Fatalf("resources %+v, want the native sidecar envoy's", u.Resources)
			}
			if got := FormatResources(u.Resources[0].To); got != tc.wantTo {
				t.Errorf("resized to %s, want %s", got, tc.wantTo)
			}
		})
	}
}

// TestResizePatch: the resize sets each new quantity, the rollback each
// old one; an upgrade without resources has no resize.
func TestResizePatch(t *testing.T) {
	t.Parallel()
	u := Upgrade{Pod: "web-0", Resources: []ResourceChange{{Container: "envoy", Init: true,
		From: map[string]any{"limits": map[string]any{"cpu": "1", "memory": "512Mi"}, "requests": map[string]any{"cpu": "100m"}},
		To:   map[string]any{"limits": map[string]any{"cpu": "2", "memory": "512Mi"}, "requests": map[string]any{"cpu": "200m", "memory": "128Mi"}}}}}
	for _, tc := range []struct {
		name  string
		patch func() ([]byte, error)
		want  string
	}{
		{"resize", u.ResizePatch, `{"spec":{"initContainers":[{"name":"envoy","resources":{"limits":{"cpu":"2","memory":"512Mi"},"requests":{"cpu":"200m","memory":"128Mi"}}}]}}`},
		{"rollback", u.RollbackResizePatch, `{"spec":{"initContainers":[{"name":"envoy","resources":{"limits":{"cpu":"1","memory":"512Mi"},"requests":{"cpu":"100m"}}}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.patch()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if got, err := (Upgrade{Pod: "web-0"}).ResizePatch(); got != nil || err != nil {
		t.Errorf("an upgrade without resources: %s, %v", got, err)
	}
}

// TestQoSClass: the class the API server would compute, over init
// containers and containers, with requests defaulted to limits.
func TestQoSClass(t *testing.T) {
	t.Parallel()
	res := func(lim, req map[string]any) map[string]any {
		return map[string]any{"resources": map[string]any{"limits": lim, "requests": req}}
	}
	both := map[string]any{"cpu": "1", "memory": "1Gi"}
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"nothing", map[string]any{"containers": []any{map[string]any{"name": "a"}}}, qosBestEffort},
		{"zero requests are none", map[string]any{"containers": []any{res(nil, map[string]any{"cpu": "0"})}}, qosBestEffort},
		{"limits only", map[string]any{"containers": []any{res(both, nil)}}, qosGuaranteed},
		{"limits and equal requests", map[string]any{"containers": []any{res(both, map[string]any{"cpu": "1000m", "memory": "1024Mi"})}}, qosGuaranteed},
		{"a smaller request", map[string]any{"containers": []any{res(both, map[string]any{"cpu": "500m"})}}, qosBurstable},
		{"memory not limited", map[string]any{"containers": []any{res(map[string]any{"cpu": "1"}, nil)}}, qosBurstable},
		{"an init container without limits", map[string]any{"containers": []any{res(both, nil)}, "initContainers": []any{map[string]any{"name": "i"}}}, qosBurstable},
		{"pod-level resources", map[string]any{"resources": both, "containers": []any{res(both, nil)}}, "set by the Pod's own resources"},
	} {
		if got := qosClass(tc.spec, nil); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestFormatResources: the rollback's message names the resources a
// sidecar went back to, requests first, numbers as text.
func TestFormatResources(t *testing.T) {
	t.Parallel()
	got := FormatResources(map[string]any{"limits": map[string]any{"memory": "512Mi", "cpu": float64(2)}, "requests": map[string]any{"cpu": "100m"}})
	if want := "requests cpu=100m; limits cpu=2,memory=512Mi"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
