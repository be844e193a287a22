package processor

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// ResourceListKind is the kind of the KRM function's input and output.
const ResourceListKind = "ResourceList"

// ResourceList is what a function processes: the items, the function
// config, and the results it adds.
type ResourceList struct {
	Items          []*yaml.RNode
	FunctionConfig *yaml.RNode
	// Results are the new results; Run appends them to the ones that
	// came in.
	Results Results
}

// ResourceListProcessor processes a ResourceList in place. An error of
// type Results is reported after the output is written; any other error
// stops Run before it writes anything.
type ResourceListProcessor interface {
	Process(rl *ResourceList) error
}

// Run reads a ResourceList from r, processes it and writes the result to
// w. Results that came in are kept and the new ones are appended. When any
// new result is an error, Run returns it after writing the whole output.
//
// Reading is kyaml's (kio.ByteReadWriter, keeping reader annotations);
// writing is writeResourceList, which writes the bytes kio.ByteWriter
// would, one item at a time.
func Run(p ResourceListProcessor, r io.Reader, w io.Writer) error {
	rw := &kio.ByteReadWriter{Reader: r, KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		return fmt.Errorf("reading the ResourceList: %w", err)
	}
	if rw.WrappingKind != ResourceListKind {
		return fmt.Errorf("reading the ResourceList: input is not a %s (to edit YAML files, run inject-fn CONFIG.yaml FILE.yaml...)", ResourceListKind)
	}
	// kyaml reads items and the function config with getters that panic
	// on a list where a mapping should be: stop before anything runs.
	for i, item := range items {
		if err := inject.CheckObjectShape(item); err != nil {
			return fmt.Errorf("reading the ResourceList: items[%d]: %w; every item of a ResourceList is a Kubernetes object", i, err)
		}
	}
	if fc := rw.FunctionConfig; fc != nil && !fc.IsNilOrEmpty() {
		if err := inject.CheckObjectShape(fc); err != nil {
			return fmt.Errorf("reading the ResourceList: functionConfig: %w", err)
		}
	}
	rl := &ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
	procErr := p.Process(rl)
	var results Results
	if errors.As(procErr, &results) {
		procErr = results // reported below, after the output
	} else if procErr != nil {
		return procErr
	}
	out := resourceListWriter{
		apiVersion:     rw.WrappingAPIVersion,
		kind:           rw.WrappingKind,
		functionConfig: rw.FunctionConfig,
		results:        rw.Results,
		newResults:     rl.Results,
	}
	if err := out.write(w, rl.Items); err != nil {
		return fmt.Errorf("writing the ResourceList: %w", err)
	}
	return procErr
}

// resourceListWriter writes a ResourceList byte for byte as
// kio.ByteWriter does with KeepReaderAnnotations, a wrapping kind and no
// style: apiVersion and kind as read, items (empty annotations and
// metadata cleared, nothing else touched; "items: []" when there are
// none), functionConfig when there is one, then results when there are
// any. kio.ByteWriter encodes the whole list with one yaml.v3 Encoder,
// whose event buffer grows with the output (go-yaml/yaml#873); here each
// item and each result is encoded by a fresh Encoder as a one-element
// block sequence, which puts it at the same column with the same "- " the
// shared encoder gives it, so the bytes are the same and the cost is
// linear.
type resourceListWriter struct {
	apiVersion, kind string
	functionConfig   *yaml.RNode
	results          *yaml.RNode // as read, nil when absent
	newResults       Results
}

func (l resourceListWriter) write(w io.Writer, items []*yaml.RNode) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	header := mapping(scalar("apiVersion"), scalar(l.apiVersion), scalar("kind"), scalar(l.kind))
	if len(items) == 0 {
		header.Content = append(header.Content, scalar("items"), &yaml.Node{Kind: yaml.SequenceNode})
	}
	if err := encode(bw, header); err != nil {
		return err
	}
	if len(items) > 0 {
		bw.WriteString("items:\n")
		for _, item := range items {
			if err := yaml.ClearEmptyAnnotations(item); err != nil {
				return err
			}
			if err := encode(bw, sequence(item.YNode())); err != nil {
				return err
			}
		}
	}
	if l.functionConfig != nil {
		if err := encode(bw, mapping(scalar("functionConfig"), l.functionConfig.YNode())); err != nil {
			return err
		}
	}
	if err := l.writeResults(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// writeResults writes the results that came in followed by the new ones.
// New results replace an incoming results field that is not a sequence.
func (l resourceListWriter) writeResults(w io.Writer) error {
	in := l.results
	switch {
	case len(l.newResults) == 0:
		if in == nil {
			return nil
		}
		return encode(w, mapping(scalar("results"), in.YNode()))
	case in == nil || in.YNode().Kind != yaml.SequenceNode:
		in = nil
	case !plainBlockSequence(in.YNode()):
		// An incoming flow or commented sequence: build the node the
		// shared encoder would see and encode it whole.
		all, err := resultsNode(in, l.newResults)
		if err != nil {
			return err
		}
		return encode(w, mapping(scalar("results"), all.YNode()))
	}
	if _, err := io.WriteString(w, "results:\n"); err != nil {
		return err
	}
	if in != nil {
		for _, r := range in.YNode().Content {
			if err := encode(w, sequence(r)); err != nil {
				return err
			}
		}
	}
	for _, r := range l.newResults {
		if err := encode(w, Results{r}); err != nil {
			return fmt.Errorf("encoding results: %w", err)
		}
	}
	return nil
}

// plainBlockSequence reports whether n is a non-empty block sequence with
// nothing of its own to print (comments, an anchor, a tag): then its
// elements can be written one by one after "key:\n".
func plainBlockSequence(n *yaml.Node) bool {
	return n.Kind == yaml.SequenceNode && n.Style == 0 && len(n.Content) > 0 &&
		n.HeadComment == "" && n.LineComment == "" && n.FootComment == "" &&
		n.Anchor == "" && (n.Tag == "" || n.Tag == yaml.NodeTagSeq)
}

// resultsNode appends results to a copy of the sequence that came in.
func resultsNode(in *yaml.RNode, results Results) (*yaml.RNode, error) {
	b, err := yaml.Marshal(results)
	if err != nil {
		return nil, fmt.Errorf("encoding results: %w", err)
	}
	out, err := yaml.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("encoding results: %w", err)
	}
	all := in.Copy()
	all.YNode().Content = append(all.YNode().Content, out.YNode().Content...)
	return all, nil
}

// encode writes v as one YAML document with a fresh encoder, set up as
// kio.ByteWriter's (indent 2, compact sequences).
func encode(w io.Writer, v any) error {
	e := yaml.NewEncoder(w)
	if err := e.Encode(v); err != nil {
		return err
	}
	return e.Close()
}

func scalar(value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: value}
}

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// mapping is a block mapping of key, value pairs.
func mapping(keysAndValues ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: keysAndValues}
}
