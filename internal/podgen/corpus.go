package podgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// CorpusPods returns the Pods of the golden corpus's cases under dir that
// have no config of their own (they use the default template).
func CorpusPods(dir string) ([][]byte, error) {
	cases, err := filepath.Glob(filepath.Join(dir, "*", "input.yaml"))
	if err != nil || len(cases) == 0 {
		return nil, fmt.Errorf("no golden cases under %s: %v", dir, err)
	}
	var out [][]byte
	for _, input := range cases {
		caseDir := filepath.Dir(input)
		if _, err := os.Stat(filepath.Join(caseDir, "config.yaml")); err == nil {
			continue
		}
		pods, err := CasePods(caseDir)
		if err != nil {
			return nil, err
		}
		out = append(out, pods...)
	}
	return out, nil
}

// CasePods returns every Pod of a golden case's input, and a Pod made of
// every other object's pod template (its labels and annotations, and its
// spec), each named after the case.
func CasePods(caseDir string) ([][]byte, error) {
	data, err := os.ReadFile(filepath.Join(caseDir, "input.yaml"))
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for j, doc := range strings.Split(string(data), "\n---") {
		var obj map[string]any
		if yaml.Unmarshal([]byte(doc), &obj) != nil || obj == nil {
			continue // the corpus has invalid documents on purpose
		}
		for k, pod := range podsOf(obj) {
			meta, _ := pod["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["name"] = strings.ToLower(filepath.Base(caseDir)) + "-" + strconv.Itoa(j) + "-" + strconv.Itoa(k)
			if objMeta, _ := obj["metadata"].(map[string]any); objMeta["namespace"] != nil {
				meta["namespace"] = objMeta["namespace"]
			}
			pod["metadata"] = meta
			b, err := yaml.Marshal(pod)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", caseDir, err)
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// podTemplatePaths are where the built-in kinds hold their pod template.
var podTemplatePaths = map[string][]string{
	"Deployment": {"spec", "template"}, "ReplicaSet": {"spec", "template"}, "StatefulSet": {"spec", "template"},
	"DaemonSet": {"spec", "template"}, "Job": {"spec", "template"}, "ReplicationController": {"spec", "template"},
	"PodTemplate": {"template"}, "CronJob": {"spec", "jobTemplate", "spec", "template"},
}

// podsOf returns obj as a Pod when it is one, or Pods made of the pod
// templates of obj (and of a List's items).
func podsOf(obj map[string]any) []map[string]any {
	kind, _ := obj["kind"].(string)
	if kind == "List" {
		var out []map[string]any
		items, _ := obj["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, podsOf(m)...)
			}
		}
		return out
	}
	if kind == "Pod" {
		return []map[string]any{obj}
	}
	path, ok := podTemplatePaths[kind]
	if !ok {
		return nil
	}
	var cur any = obj
	for _, f := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	tpl, ok := cur.(map[string]any)
	if !ok {
		return nil
	}
	spec, ok := tpl["spec"].(map[string]any)
	if !ok {
		return nil
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec}
	if m, ok := tpl["metadata"].(map[string]any); ok {
		meta := map[string]any{}
		for _, f := range []string{"labels", "annotations"} {
			if v, ok := m[f]; ok {
				meta[f] = v
			}
		}
		pod["metadata"] = meta
	}
	return []map[string]any{pod}
}

// HasEmptyFields reports whether a Pod (decoded) has a field the
// injection records (labels, annotations, initContainers, volumes) set
// explicitly to null, [] or {}. The API server drops such fields before
// admission: the policy cannot tell "volumes: null" from no volumes.
func HasEmptyFields(pod map[string]any) bool {
	for _, f := range []struct{ parent, field string }{
		{"metadata", "labels"}, {"metadata", "annotations"}, {"spec", "initContainers"}, {"spec", "volumes"},
	} {
		m, _ := pod[f.parent].(map[string]any)
		v, present := m[f.field]
		if !present {
			continue
		}
		switch x := v.(type) {
		case nil:
			return true
		case []any:
			if len(x) == 0 {
				return true
			}
		case map[string]any:
			if len(x) == 0 {
				return true
			}
		}
	}
	return false
}

// UncompiledConfigs are the golden corpus's configs (by case) that compile
// to no admission policy, each with the reason the compiler gives: the
// admission comparisons leave out these cases, and only these.
var UncompiledConfigs = map[string]string{
	"selection": "kinds: Deployment leaves out Pod, and the admission policy injects only Pods",
}
