package yamltext

import (
	"bytes"
	"errors"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DecodeBatch is Decode on each of srcs, the texts of consecutive
// documents, with one parser for as many of them as it can: the YAML
// parser allocates about 7 KB before it reads a byte (its buffers, token
// queue and state), more than a Service's whole tree, so a stream of
// small documents spends a third of its parsing on parsers. The results
// are those of Decode, position for position: the texts are parsed as one
// stream, each after a "---" line, and every node's line is moved back
// by the lines before its text.
//
// A text is parsed on its own, as Decode parses it, wherever the stream
// could read it otherwise (batchable says which), where an alias names an
// anchor of an earlier text (which one stream of documents resolves and
// Decode refuses), and from the text before the one where the stream's
// parse failed on (so that an error names the text's own lines).
func DecodeBatch(srcs [][]byte) ([]*yaml.Node, []error) {
	nodes, alone := decodeStream(srcs)
	errs := make([]error, len(srcs))
	for i, src := range srcs {
		if alone[i] {
			nodes[i], errs[i] = Decode(src)
		}
	}
	return nodes, errs
}

// decodeStream parses srcs as one stream where it can, and says which
// texts it could not (alone).
func decodeStream(srcs [][]byte) (nodes []*yaml.Node, alone []bool) {
	nodes = make([]*yaml.Node, len(srcs))
	alone = make([]bool, len(srcs))
	size := 0
	for _, src := range srcs {
		size += len("---\n") + len(src)
	}
	stream := bytes.NewBuffer(make([]byte, 0, size))
	var firstLine []int // per text in the stream: its first line there
	var inStream []int  // the index in srcs of each text in the stream
	line := 1
	for i, src := range srcs {
		breaks, ok := batchable(src)
		if !ok {
			alone[i] = true
			continue
		}
		stream.WriteString("---\n")
		line++
		firstLine = append(firstLine, line)
		inStream = append(inStream, i)
		stream.Write(src)
		line += breaks
	}
	if len(inStream) > 1 {
		dec := yaml.NewDecoder(bytes.NewReader(stream.Bytes()))
		k := 0
		for ; k < len(inStream); k++ {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			i := inStream[k]
			if !moveLinesOwnAliases(&doc, firstLine[k]-1) {
				alone[i] = true
				continue
			}
			// The document node sits on the "---" line; alone, it sits
			// where its content starts.
			if len(doc.Content) > 0 {
				doc.Line, doc.Column = doc.Content[0].Line, doc.Content[0].Column
			}
			nodes[i] = documentOrNil(&doc)
		}
		// After a failure the parser cannot go on: the failed text and
		// those after it are parsed alone, and so is the text before it,
		// since what fails may be its end (the parser reads past a
		// document's last node to find where it ends). So is the whole
		// stream when it held more documents than texts, which batchable
		// rules out.
		var more yaml.Node
		switch {
		case k < len(inStream):
			k = max(k-1, 0)
		case !errors.Is(dec.Decode(&more), io.EOF):
			k = 0
		}
		for ; k < len(inStream); k++ {
			alone[inStream[k]] = true
		}
	} else {
		for _, i := range inStream {
			alone[i] = true
		}
	}
	return nodes, alone
}

// batchable reports whether src reads the same after a "---" line in a
// stream as alone, and counts its line breaks as the parser does (LF,
// CR LF, a lone CR). It must end with a line end (a block scalar at its
// end would gain one), break lines only with LF and CR, start with no
// byte order mark (which sets the encoding of a whole stream), have no
// line that starts or ends a document ("---", "...", a "%" directive:
// alone, the text would be more than one document, which Decode
// refuses), no JSON "\/" escape (which Decode reads on its own), and
// every comment line ended by LF and directly above the line it heads.
// One pass over src: a text can be megabytes.
func batchable(src []byte) (breaks int, ok bool) {
	if len(src) == 0 || src[len(src)-1] != '\n' || src[0] >= 0x80 {
		return 0, false
	}
	if bytes.Contains(src, []byte(`\/`)) || bytes.IndexByte(src, 0) >= 0 {
		return 0, false
	}
	// The parser also breaks lines at NEL, LS and PS, which are not
	// counted here.
	for _, brk := range []string{"\u0085", "\u2028", "\u2029"} {
		if bytes.Contains(src, []byte(brk)) {
			return 0, false
		}
	}
	// commentAbove: the line before is a comment (at the margin: margin),
	// which must head the line below it for the stream to place it as
	// Decode does. A comment a blank line above the content is the
	// document's alone, one below the content its last node's.
	commentAbove, margin := false, false
	for rest := src; len(rest) > 0; breaks++ {
		if rest[0] == '%' || bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("...")) {
			return 0, false
		}
		line := bytes.TrimLeft(rest, " \t")
		indent := len(rest) - len(line)
		end := bytes.IndexAny(line, "\r\n") // src ends with a line end
		switch {
		case end == 0: // blank
			if commentAbove {
				return 0, false
			}
		case line[0] == '#':
			if line[end] == '\r' {
				// The parser places a comment that ends in CR otherwise
				// in a stream than alone.
				return 0, false
			}
			commentAbove, margin = true, indent == 0
		default: // content
			if commentAbove && margin && indent > 0 {
				return 0, false
			}
			commentAbove = false
		}
		if line[end] == '\r' && end+1 < len(line) && line[end+1] == '\n' {
			end++ // CR LF is one break
		}
		rest = line[end+1:]
	}
	return breaks, !commentAbove
}

// moveLinesOwnAliases moves every node of doc up by lines, and reports
// whether every alias in doc names an anchor of doc defined before it (in
// the order of the text, which is the tree's): one walk for both.
func moveLinesOwnAliases(doc *yaml.Node, lines int) bool {
	var anchors map[*yaml.Node]bool
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		n.Line -= lines
		if n.Kind == yaml.AliasNode {
			return anchors[n.Alias]
		}
		if n.Anchor != "" {
			if anchors == nil {
				anchors = map[*yaml.Node]bool{}
			}
			anchors[n] = true
		}
		for _, c := range n.Content {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	return walk(doc)
}
