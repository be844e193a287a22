package static

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/podgen"
)

// warnings collects the warnings the API server returns, per request
// (the requests of one client are made one at a time).
type warnings struct {
	sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.Lock()
	defer w.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) take() []string {
	w.Lock()
	defer w.Unlock()
	out := w.got
	w.got = nil
	return out
}

// comparable is a stored Pod without what the API server sets anew at
// each creation and the namespace it was created in.
func comparable(p *unstructured.Unstructured) map[string]any {
	o := p.DeepCopy().Object
	meta, _ := o["metadata"].(map[string]any)
	for _, k := range []string{"namespace", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"} {
		delete(meta, k)
	}
	return o
}

// TestStaticDifferential creates every Pod of the admission corpus (the
// golden corpus's Pods and the generated ones of the default suite) in a
// namespace of the static policy and in one of the policy installed
// through the API: the stored Pods, or the errors, are equal field for
// field, and so are the warnings. Nothing is waived but what differs by
// design, each listed: the namespace and what the API server sets anew
// (comparable), and the policy's name in a warning
// (kinject-envoy-conflicts.static.k8s.io against kinject-api-conflicts).
func TestStaticDifferential(t *testing.T) {
	setup(t)
	corpus, err := podgen.CorpusPods("../../pkg/inject/testdata/golden")
	if err != nil {
		t.Fatal(err)
	}
	g, err := podgen.For(podgen.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	const generated = 60
	all := append(corpus, g.Pods(1, generated, "gen")...)
	cfg := c.AdminConfig()
	w := &warnings{}
	cfg.WarningHandler = w
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	counts := map[string]int{}
	for _, manifest := range all {
		j, err := yaml.YAMLToJSON(manifest)
		if err != nil {
			t.Fatal(err)
		}
		var pod unstructured.Unstructured
		if err := pod.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		type result struct {
			pod      *unstructured.Unstructured
			err      string
			warnings []string
		}
		var results [2]result
		for i, ns := range []string{staticNS, apiNS} {
			p := pod.DeepCopy()
			p.SetNamespace(ns)
			got, err := dc.Resource(pods).Namespace(ns).Create(ctx, p, metaCreate)
			results[i].pod = got
			if err != nil {
				results[i].err = strings.ReplaceAll(err.Error(), ns, "NS")
			}
			for _, warning := range w.take() {
				warning = strings.ReplaceAll(warning, "kinject-envoy-conflicts.static.k8s.io", "POLICY")
				warning = strings.ReplaceAll(warning, "kinject-envoy.static.k8s.io", "POLICY")
				warning = strings.ReplaceAll(warning, "kinject-api-conflicts", "POLICY")
				warning = strings.ReplaceAll(warning, "kinject-api", "POLICY")
				results[i].warnings = append(results[i].warnings, strings.ReplaceAll(warning, ns, "NS"))
			}
		}
		name := pod.GetName()
		counts["pods"]++
		if results[0].err != results[1].err {
			t.Errorf("%s: static %q, through the API %q", name, results[0].err, results[1].err)
			continue
		}
		if !reflect.DeepEqual(results[0].warnings, results[1].warnings) {
			t.Errorf("%s: warnings: static %q, through the API %q", name, results[0].warnings, results[1].warnings)
		}
		if results[0].err != "" {
			counts["refused-both"]++
			continue
		}
		a, b := comparable(results[0].pod), comparable(results[1].pod)
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.MarshalIndent(a, "", " ")
			jb, _ := json.MarshalIndent(b, "", " ")
			t.Errorf("%s: the stored Pods differ:\nstatic: %s\nthrough the API: %s", name, ja, jb)
			continue
		}
		counts["compared"]++
		counts["outcome/"+injected(results[0].pod)]++
		if len(results[0].warnings) > 0 {
			counts["warned"]++
		}
	}
	t.Logf("%d Pods (%d of the corpus, %d generated): %v", len(all), len(corpus), generated, counts)
	if counts["pods"] != len(all) || counts["compared"]+counts["refused-both"] != len(all) {
		t.Errorf("%d Pods run, %d compared, %d refused by both: want all %d", counts["pods"], counts["compared"], counts["refused-both"], len(all))
	}
	for _, k := range []string{"outcome/injected", "outcome/skipped", "warned"} {
		if counts[k] < 3 {
			t.Errorf("%s: %d Pods, want at least 3 (the corpus has more)", k, counts[k])
		}
	}
}
