package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/staticdir"
)

// staticFileKey marks, in memory only, a policy read from a static
// manifest: its file.
const staticFileKey = "kinject.dev/static-manifest"

// readStaticPolicies reads the mutating policies kubectl-inject wrote as
// static manifests under dir (--static): the API lists none of them.
func readStaticPolicies(dir string) ([]unstructured.Unstructured, error) {
	all, err := readStaticObjects(dir, admission.StaticMutatingDir)
	if err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, u := range all {
		if u.GetKind() == admission.KindMutatingPolicy && u.GetLabels()["app.kubernetes.io/managed-by"] == admission.FieldManager {
			out = append(out, u)
		}
	}
	return out, nil
}

// staticObjects reads from the static manifests under dir the objects of
// the compiled ones (the same kinds and names, in the same order), as
// installedObjects reads them from the API.
func staticObjects(dir string, compiled [][]byte) ([][]byte, error) {
	var all []unstructured.Unstructured
	for _, sub := range []string{admission.StaticMutatingDir, admission.StaticValidatingDir} {
		objs, err := readStaticObjects(dir, sub)
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
	}
	var out [][]byte
	for _, data := range compiled {
		want := &unstructured.Unstructured{}
		if err := want.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		i := slices.IndexFunc(all, func(u unstructured.Unstructured) bool {
			return u.GetKind() == want.GetKind() && u.GetName() == want.GetName()
		})
		if i < 0 {
			return nil, fmt.Errorf("--static %s: no %s/%s (kubectl inject check --static %s says what is there)", dir, strings.ToLower(want.GetKind()), want.GetName(), dir)
		}
		got := all[i].DeepCopy()
		ann := got.GetAnnotations()
		delete(ann, staticFileKey)
		got.SetAnnotations(ann)
		b, err := got.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// readStaticObjects reads every object of the static manifests in
// dir/sub, each marked with its file (staticFileKey).
func readStaticObjects(dir, sub string) ([]unstructured.Unstructured, error) {
	d := filepath.Join(dir, sub)
	entries, err := os.ReadDir(d)
	if err != nil {
		return nil, fmt.Errorf("--static %s: %w", dir, err)
	}
	var out []unstructured.Unstructured
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		file := filepath.Join(d, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			var u unstructured.Unstructured
			if err := u.UnmarshalJSON(j); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[staticFileKey] = file
			u.SetAnnotations(ann)
			out = append(out, u)
		}
	}
	return out, nil
}

// metricsReader reads the API server's /metrics (nil: not read).
type metricsReader func(ctx context.Context) ([]byte, error)

// serverMetrics reads /metrics of the API server cf names (the one the
// request reaches, behind a load balancer).
func serverMetrics(cf *genericclioptions.ConfigFlags) metricsReader {
	return func(ctx context.Context) ([]byte, error) {
		cfg, err := cf.ToRESTConfig()
		if err != nil {
			return nil, err
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	}
}

// staticConfigMetric is the metric in which an API server (1.37+) says
// which static manifests it runs: per plugin, the hash of the files it
// loaded last (staticdir.Hash).
const staticConfigMetric = "apiserver_manifest_admission_config_controller_last_config_info"

// servedStaticHash is the hash of the static MutatingAdmissionPolicy
// manifests the API server runs, "" when it runs none.
func servedStaticHash(ctx context.Context, metrics metricsReader) (string, error) {
	data, err := metrics(ctx)
	if err != nil {
		return "", fmt.Errorf("cannot read the API server's /metrics: %s", readError(err))
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, staticConfigMetric+"{") {
			continue
		}
		labels, _, _ := strings.Cut(line[len(staticConfigMetric)+1:], "}")
		if metricLabel(labels, "plugin") == "MutatingAdmissionPolicy" {
			return metricLabel(labels, "hash"), nil
		}
	}
	return "", nil
}

// metricLabel is the value of one label in a Prometheus text line's
// label set (values here hold no quotes or commas).
func metricLabel(labels, name string) string {
	for _, kv := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// staticServed compares the mutating manifests in dir with those the API
// server runs: a note for the source line when they are the same, an
// error when they differ (not reloaded yet, or another directory).
func staticServed(ctx context.Context, metrics metricsReader, dir string) (string, error) {
	want, err := staticdir.Hash(filepath.Join(dir, admission.StaticMutatingDir))
	if err != nil {
		return "", err
	}
	got, err := servedStaticHash(ctx, metrics)
	switch {
	case err != nil:
		return "", err
	case got == "":
		return "", fmt.Errorf("the API server runs no static mutating admission policy; %s holds %s (is its AdmissionConfiguration given to kube-apiserver with --admission-control-config-file?)", dir, want)
	case got != want:
		return "", fmt.Errorf("the API server runs other static manifests (%s) than %s holds (%s): it reloads changed files within a minute; otherwise the directory is not the one it reads", got, filepath.Join(dir, admission.StaticMutatingDir), want)
	}
	return "the API server runs them: " + got, nil
}
