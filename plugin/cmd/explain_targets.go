package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

func (o *ExplainOptions) targets(ctx context.Context, client dynamic.Interface, namespace string, args []string) ([]explainTarget, error) {
	var objs []*unstructured.Unstructured
	existing := false
	if len(o.Flags.Filenames) > 0 {
		for _, name := range o.Flags.Filenames {
			read, err := readObjects(name, o.In)
			if err != nil {
				return nil, err
			}
			objs = append(objs, read...)
		}
	} else {
		existing = true
		for _, arg := range args {
			typ, name, _ := strings.Cut(arg, "/")
			filter, err := parseStatusArgs([]string{typ})
			if err != nil {
				return nil, errors.New(strings.Replace(err.Error(), "kubectl inject status shows", "kubectl inject explain reads", 1))
			}
			for resource := range filter { // one kind
				obj, err := client.Resource(gvrOf(resource)).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return nil, fmt.Errorf("%s: %s", arg, readError(err))
				}
				objs = append(objs, obj)
			}
		}
	}
	var out []explainTarget
	for _, obj := range objs {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		path, ok := podTemplates[obj.GetKind()]
		ref := strings.ToLower(obj.GetKind()) + "/" + obj.GetName()
		if !ok {
			continue // not a kind whose Pods a policy injects
		}
		pod := obj
		if path != nil {
			tmpl, found, _ := unstructured.NestedMap(obj.Object, path...)
			if !found {
				return nil, fmt.Errorf("%s: %s: is missing", ref, strings.Join(path, "."))
			}
			pod = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": tmpl["metadata"], "spec": tmpl["spec"]}}
			if pod.Object["metadata"] == nil {
				pod.Object["metadata"] = map[string]any{}
			}
			pod.SetName(obj.GetName())
			pod.SetNamespace(obj.GetNamespace())
		}
		out = append(out, explainTarget{ref: ref, obj: obj, pod: pod, existing: existing && path == nil})
	}
	if len(out) == 0 {
		return nil, errors.New("no Pod or workload to explain")
	}
	return out, nil
}

// readObjects reads the objects of a YAML or JSON stream.
func readObjects(name string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []*unstructured.Unstructured
	for i, n := range nodes {
		b, err := n.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		out = append(out, u)
	}
	return out, nil
}
