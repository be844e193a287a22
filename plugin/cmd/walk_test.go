package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestRepositoryWalk: a directory walk (-f DIR -R) over a repository skips
// hidden directories unless they are named, and skips documents that are
// not Kubernetes objects (a values file) with not_kubernetes instead of
// failing; a file named on its own is still an error.
func TestRepositoryWalk(t *testing.T) {
	const repo = "testdata/repo"
	out, stderr, code := runCmd(t, "", "--local", "-f", repo, "-R")
	if code != 0 {
		t.Fatalf("walk: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"testdata/repo/app/deployment.yaml: deployment.apps/web injected\n",
		"testdata/repo/chart/values.yaml: document 1 skipped: not_kubernetes",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("report lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, ".github") || strings.Contains(stderr, ".cache") || strings.Contains(out, "cached") {
		t.Errorf("hidden directories were walked:\n%s", stderr)
	}
	if _, stderr, code := runCmd(t, "", "--local", "-f", repo, "-R", "--check"); code != 1 || !strings.Contains(stderr, "1 of 2 objects are not current (1 would change, 0 failed)") {
		t.Errorf("--check over the repository: exit %d, want 1 with no failure\n%s", code, stderr)
	}
	if _, stderr, code := runCmd(t, "", "--local", "-f", repo+"/.github/workflows/ci.yaml"); code != 1 || !strings.Contains(stderr, "not a Kubernetes object") {
		t.Errorf("a named non-Kubernetes file: exit %d, want an error\n%s", code, stderr)
	}
	if _, stderr, code := runCmd(t, "", "--local", "-f", repo+"/.cache", "-R"); code != 0 || !strings.Contains(stderr, "deployment.apps/cached injected") {
		t.Errorf("a hidden directory named with -f: exit %d\n%s", code, stderr)
	}
}

// TestLocalOutputConversion: --local -o json and -o yaml convert, as
// kubectl prints: one object as itself, several as a List.
func TestLocalOutputConversion(t *testing.T) {
	path := t.TempDir() + "/app.yaml"
	writeFile(t, path, app)
	out, stderr, code := runCmd(t, "", "--local", "-f", path, "-o", "json")
	if code != 0 {
		t.Fatalf("-o json: exit %d\n%s", code, stderr)
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("-o json of two objects: %v\n%s", err, out)
	}
	if !strings.Contains(out, "\n    \"apiVersion\": \"v1\",") || !strings.Contains(out, `"name": "envoy"`) {
		t.Errorf("-o json: want kubectl's 4-space indentation and the sidecar\n%s", out)
	}
	one := t.TempDir() + "/one.json"
	writeFile(t, one, `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "x"}]}}`)
	out, stderr, code = runCmd(t, "", "--local", "-f", one, "-o", "yaml")
	if code != 0 {
		t.Fatalf("-o yaml: exit %d\n%s", code, stderr)
	}
	var pod map[string]any
	if err := yaml.Unmarshal([]byte(out), &pod); err != nil || pod["kind"] != "Pod" || !strings.HasPrefix(out, "apiVersion: v1\nkind: Pod\n") {
		t.Errorf("-o yaml of a JSON Pod: %v\n%s", err, out)
	}
	if _, stderr, code := runCmd(t, "", "--local", "-f", one, "-o", "name"); code == 0 || !strings.Contains(stderr, "--output name is for live objects") {
		t.Errorf("-o name with --local: exit %d\n%s", code, stderr)
	}
}

// TestLocalOutputSolidus: a JSON document with the "\/" escape (PHP's
// json_encode writes it) is converted by -o yaml and -o json like any
// other, not left out of the output.
func TestLocalOutputSolidus(t *testing.T) {
	path := t.TempDir() + "/pod.json"
	writeFile(t, path, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"x","args":["\/x"]}]}}`+"\n")
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			out, stderr, code := runCmd(t, "", "--local", "-f", path, "-o", format)
			if want := path + ": pod/p injected\n"; code != 0 || stderr != want {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 0 and:\n%s", code, stderr, want)
			}
			var pod struct {
				Kind string `json:"kind"`
				Spec struct {
					Containers []struct {
						Name string   `json:"name"`
						Args []string `json:"args"`
					} `json:"containers"`
					InitContainers []struct {
						Name string `json:"name"`
					} `json:"initContainers"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal([]byte(out), &pod); err != nil {
				t.Fatalf("-o %s: %v\n%s", format, err, out)
			}
			c, ic := pod.Spec.Containers, pod.Spec.InitContainers
			if pod.Kind != "Pod" || len(c) != 1 || c[0].Name != "a" || len(c[0].Args) != 1 || c[0].Args[0] != "/x" || len(ic) != 1 || ic[0].Name != "envoy" {
				t.Errorf("-o %s: want the injected Pod with args [/x]:\n%s", format, out)
			}
		})
	}
}

// TestLocalOutputSkipsNotKubernetes: a file of a walked directory that is
// no Kubernetes object (a values file) is skipped by -o json as it is by
// the report, not printed as an object.
func TestLocalOutputSkipsNotKubernetes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: x}]\n")
	writeFile(t, dir+"/values.yaml", "replicas: 3\n")
	out, stderr, code := runCmd(t, "", "--local", "-f", dir, "-o", "json")
	if want := dir + "/pod.yaml: pod/p injected\n" + dir + "/values.yaml: document 1 skipped: not_kubernetes\n"; code != 0 || stderr != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 0 and:\n%s", code, stderr, want)
	}
	var pod map[string]any
	if err := json.Unmarshal([]byte(out), &pod); err != nil || pod["kind"] != "Pod" {
		t.Errorf("-o json of a directory with one object and a values file: want the Pod alone: %v\n%s", err, out)
	}
}
