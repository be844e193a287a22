package yamltext_test

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// field returns the value of key in the mapping m.
func field(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func ExampleSplice() {
	src := []byte(`# the web tier
spec:
    containers:
      - name: app   # the app itself
        image: 'web:1'
`)
	doc, err := yamltext.Decode(src)
	if err != nil {
		panic(err)
	}
	containers := field(field(doc.Content[0], "spec"), "containers")
	sidecar := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name"},
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "proxy"},
	}}
	image := field(containers.Content[0], "image")
	out, sure, err := yamltext.Splice(src, []yamltext.Edit{
		yamltext.Insert(containers, nil, "", sidecar),
		yamltext.Set(image, "web:2"),
	}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	fmt.Println("sure:", sure)
	// Output:
	// # the web tier
	// spec:
	//     containers:
	//       - name: app   # the app itself
	//         image: 'web:2'
	//       - name: proxy
	// sure: false
}

func ExampleSplice_json() {
	src := []byte("{\r\n  \"metadata\": {\r\n    \"labels\": {}\r\n  }\r\n}\r\n")
	doc, err := yamltext.Decode(src)
	if err != nil {
		panic(err)
	}
	labels := field(field(doc.Content[0], "metadata"), "labels")
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "web"}
	out, _, err := yamltext.Splice(src, []yamltext.Edit{yamltext.Insert(labels, nil, "app", value)}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", out)
	// Output:
	// "{\r\n  \"metadata\": {\r\n    \"labels\": {\r\n      \"app\": \"web\"\r\n    }\r\n  }\r\n}\r\n"
}

func ExampleApply() {
	doc, err := yamltext.Decode([]byte("a: 1\nb: 2\n"))
	if err != nil {
		panic(err)
	}
	root := doc.Content[0]
	if err := yamltext.Apply([]yamltext.Edit{yamltext.Delete(root, root.Content[0])}); err != nil {
		panic(err)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// b: 2
}
