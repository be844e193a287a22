package yamltext_test

import (
	"errors"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// spliceExact are edits of a document's root (the whole mapping, not its
// "spec"), with the exact text Splice writes, whether it reports the
// positions sure, or that it refuses (ErrNotSpliceable).
var spliceExact = []struct {
	name, src, want string
	sure, refused   bool
	broken          bool // the text is wrong: what sure false is for
	edits           func(root *yaml.Node) []yamltext.Edit
}{
	{
		// The empty value's tag sits below a comment line: the end of the
		// pair is not where the plain rules put it, and the splice is
		// checked.
		name: "a line indented deeper after the last pair",
		src:  "spec:\n  a:\n  # c\n    !!null\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a:\n  b: x\n  # c\n    !!null\n", broken: true,
	},
	{
		name: "a pair after the last, plain",
		src:  "spec:\n  a: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: 1\n  b: x\n", sure: true,
	},
	{
		name: "items written wide are widened",
		src:  "items:\n-   name: a\n    x: 1\nafter: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "items"), nil, "", item("b"))}
		},
		want: "items:\n-   name: a\n    x: 1\n-   name: b\nafter: 1\n", sure: true,
	},
	{
		name: "a two-key item written three wide, nested",
		src:  "spec:\n  items:\n  -  name: a\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			it := item("b")
			it.Content = append(it.Content, str("image"), str("c"))
			return []yamltext.Edit{yamltext.Insert(field(field(r, "spec"), "items"), nil, "", it)}
		},
		want: "spec:\n  items:\n  -  name: a\n  -  name: b\n     image: c\n", sure: true,
	},
	{
		name: "an insert at the end of a text without a last line end",
		src:  "spec:\n  a: 1",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: 1\n  b: x", sure: true,
	},
	{
		name: "an insert in the middle of a text without a last line end",
		src:  "spec:\n  a: 1\nother: 2",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: 1\n  b: x\nother: 2", sure: true,
	},
	{
		// At one offset, the item of the deeper sequence goes before the
		// new key of the mapping around it.
		name: "an item and a key at one offset",
		src:  "spec:\n  items:\n  - name: a\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Insert(spec, nil, "c", str("x")), yamltext.Insert(field(spec, "items"), nil, "", item("b"))}
		},
		want: "spec:\n  items:\n  - name: a\n  - name: b\n  c: x\n", sure: true,
	},
	{
		name: "a wide item and a key at one offset",
		src:  "spec:\n  items:\n    - name: a\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Insert(spec, nil, "c", str("x")), yamltext.Insert(field(spec, "items"), nil, "", item("b"))}
		},
		want: "spec:\n  items:\n    - name: a\n    - name: b\n  c: x\n", sure: true,
	},
	{
		name: "keys of nested mappings at one offset",
		src:  "spec:\n  inner:\n    a: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Insert(spec, nil, "c", str("x")), yamltext.Insert(field(spec, "inner"), nil, "b", str("y"))}
		},
		want: "spec:\n  inner:\n    a: 1\n    b: y\n  c: x\n", sure: true,
	},
	{
		name: "fill a null",
		src:  "spec:\n  volumes: null\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes:\n  - name: v\n  other: 1\n",
	},
	{
		name: "fill a null after a tab",
		src:  "spec:\n  volumes:\tnull\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes:\n  - name: v\n  other: 1\n",
	},
	{
		name: "fill a ~ before a comment",
		src:  "spec:\n  volumes: ~ # c\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes: # c\n  - name: v\n  other: 1\n",
	},
	{
		name: "fill an empty value before a comment",
		src:  "spec:\n  volumes: # c\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes: # c\n  - name: v\n  other: 1\n",
	},
	{
		name: "fill the last line without a line end",
		src:  "spec:\n  volumes:",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes:\n  - name: v",
	},
	{
		name: "fill the last line",
		src:  "spec:\n  volumes:\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes:\n  - name: v\n",
	},
	{
		// The filled items end before the key inserted at the same offset.
		name: "fill and a key inserted before the next",
		src:  "spec:\n  volumes:\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Insert(spec, spec.Content[2], "x", str("y")), yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes:\n  - name: v\n  x: y\n  other: 1\n",
	},
	{
		name: "fill under a quoted key",
		src:  "spec:\n  \"volumes\":\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  \"volumes\":\n  - name: v\n  other: 1\n",
	},
	{
		name: "fill under a key spaced from its colon",
		src:  "spec:\n  volumes  :\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes  :\n  - name: v\n  other: 1\n",
	},
	{
		// An explicit key at the end of the text has no colon to write
		// the null after.
		name: "nullify after a key without a colon",
		src:  "? volumes",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Nullify(r, r.Content[1], "null")}
		},
		refused: true,
	},
	{
		name: "nullify a block field whose items go",
		src:  "spec:\n  volumes:\n  - name: v\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			volumes := field(spec, "volumes")
			return []yamltext.Edit{yamltext.Delete(volumes, volumes.Content[0]), yamltext.Nullify(spec, volumes, "~")}
		},
		want: "spec:\n  volumes: ~\n  other: 1\n",
	},
	{
		name: "nullify to nothing",
		src:  "spec:\n  volumes:\n  - name: v\n  other: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			volumes := field(spec, "volumes")
			return []yamltext.Edit{yamltext.Delete(volumes, volumes.Content[0]), yamltext.Nullify(spec, volumes, "")}
		},
		want: "spec:\n  volumes:\n  other: 1\n",
	},
	{
		name: "nullify a flow field whose items go",
		src:  "spec: {volumes: [a], other: 1}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			volumes := field(spec, "volumes")
			return []yamltext.Edit{yamltext.Delete(volumes, volumes.Content[0]), yamltext.Nullify(spec, volumes, "null")}
		},
		want: "spec: {volumes: null, other: 1}\n",
	},
	{
		name: "nullify a value that is not the field's",
		src:  "spec:\n  volumes:\n  - name: v\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			volumes := field(field(r, "spec"), "volumes")
			return []yamltext.Edit{yamltext.Nullify(r, volumes, "null")}
		},
		refused: true,
	},
	{
		name: "set a plain scalar holding a comma",
		src:  "spec:\n  args: a, b # c\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Set(field(field(r, "spec"), "args"), "c")}
		},
		want: "spec:\n  args: c # c\n",
	},
	{
		name: "set a plain scalar in a flow mapping",
		src:  "spec: {image: a, tag: b}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Set(field(field(r, "spec"), "image"), "c")}
		},
		want: "spec: {image: c, tag: b}\n",
	},
	{
		// The value of the first key is a block scalar whose lines look
		// like comments: they go with it.
		name: "delete the first key",
		src:  "spec:\n  a: |\n    # not a comment\n  d: 3\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		want: "spec:\n  d: 3\n",
	},
	{
		name: "delete a key in the middle",
		src:  "spec:\n  a: 1\n  b: |\n    # not a comment\n  d: 3\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[2])}
		},
		want: "spec:\n  a: 1\n  d: 3\n",
	},
	{
		name: "a tagged flow list",
		src:  "l: !!seq [a]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		refused: true,
	},
	{
		// The quote reads as opening a string that ends on the next line: the closing bracket is not found, and the edit is refused.
		name: "a flow list whose plain item holds a quote",
		src:  "l: [it's]\nm: it's\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		refused: true,
	},
	{
		name: "a quote in a plain item, a comment at the end",
		src:  "l: [it's]\nm: it's #c",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		refused: true,
	},
	{
		name: "quoted items",
		src:  "l: ['a', \"b\"]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: ['a', \"b\", c]\n",
	},
	{
		name: "a flow mapping in a flow list",
		src:  "l: [{a: 1}]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [{a: 1}, c]\n",
	},
	{
		name: "plain items with a space and a hash",
		src:  "l: [a b, x#y]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [a b, x#y, c]\n",
	},
	{
		// The closing bracket is found past the comments, which may hold brackets.
		name: "after a flow list with a bracket in a comment",
		src:  "spec:\n  l: [a, # ]\n    b]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "c", str("d"))}
		},
		want: "spec:\n  l: [a, # ]\n    b]\n  c: d\n",
	},
	{
		name: "after a flow list with a bracket right after a comment's hash",
		src:  "spec:\n  l: [a, #]\n    b]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "c", str("d"))}
		},
		want: "spec:\n  l: [a, #]\n    b]\n  c: d\n",
	},
	{
		name: "after a flow list with a comment after a tab",
		src:  "spec:\n  l: [a,\t#]\n    b]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "c", str("d"))}
		},
		want: "spec:\n  l: [a,\t#]\n    b]\n  c: d\n",
	},
	{
		name: "after a flow list with a hash in an item",
		src:  "spec:\n  l: [a#]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "c", str("d"))}
		},
		want: "spec:\n  l: [a#]\n  c: d\n", sure: true,
	},
	{
		name: "fill a null on the last line without a line end",
		src:  "spec:\n  volumes: null",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes:\n  - name: v",
	},
	{
		name: "a flow item before a comment",
		src:  "l: [a #c\n  ]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [a, c #c\n  ]\n",
	},
	{
		name: "a flow item holding a colon",
		src:  "l: [x:y]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [x:y, c]\n",
	},
	{
		name: "one flow item spaced from its brackets",
		src:  "l: [ a ]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [ a, c ]\n",
	},
	{
		name: "one flow item on a line of its own",
		src:  "l: [\n  a\n]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [\n  a,\n  c\n]\n",
	},
	{
		name: "one flow item at the margin",
		src:  "l: [\na\n]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [\na,\nc\n]\n",
	},
	{
		name: "flow items on lines of their own",
		src:  "l: [\n  a,\n  b\n]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		want: "l: [\n  a,\n  b,\n  c\n]\n",
	},
	{
		name: "a pair after flow pairs",
		src:  "m: {a: 1, b: 2}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "m"), nil, "c", str("d"))}
		},
		want: "m: {a: 1, b: 2, c: d}\n",
	},
	{
		name: "a pair after a key alone",
		src:  "m: {a}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "m"), nil, "c", str("d"))}
		},
		want: "m: {a, c: d}\n",
	},
	{
		name: "a pair after a key and its colon",
		src:  "m: {a: }\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "m"), nil, "c", str("d"))}
		},
		want: "m: {a: , c: d}\n",
	},
	{
		name: "a pair after a key alone and a pair",
		src:  "m: {a, b: 1}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "m"), nil, "c", str("d"))}
		},
		want: "m: {a, b: 1, c: d}\n",
	},
	{
		name: "two items into an empty list of spaced JSON",
		src:  "{\"a\": []}",
		edits: func(r *yaml.Node) []yamltext.Edit {
			a := field(r, "a")
			return []yamltext.Edit{yamltext.Insert(a, nil, "", str("c")), yamltext.Insert(a, nil, "", str("d"))}
		},
		want: "{\"a\": [\"c\", \"d\"]}",
	},
	{
		name: "two items into an empty list of compact JSON",
		src:  "{\"a\":[]}",
		edits: func(r *yaml.Node) []yamltext.Edit {
			a := field(r, "a")
			return []yamltext.Edit{yamltext.Insert(a, nil, "", str("c")), yamltext.Insert(a, nil, "", str("d"))}
		},
		want: "{\"a\":[\"c\",\"d\"]}",
	},
	{
		name: "two items into an empty list of indented JSON",
		src:  "{\"a\": [\n  ],\n  \"b\": [\"x\",\n    \"y\"]\n}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			a := field(r, "a")
			return []yamltext.Edit{yamltext.Insert(a, nil, "", str("c")), yamltext.Insert(a, nil, "", str("d"))}
		},
		want: "{\"a\": [\n  \"c\",\n  \"d\"\n],\n  \"b\": [\"x\",\n    \"y\"]\n}\n",
	},
	{
		name: "set a key at the end of the text",
		src:  "a:",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Set(r.Content[0], "b")}
		},
		want: "b:",
	},
	{
		name: "delete the first flow pair",
		src:  "m: {a: 1, b: 2}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			m := field(r, "m")
			return []yamltext.Edit{yamltext.Delete(m, m.Content[0])}
		},
		want: "m: {b: 2}\n",
	},
	{
		name: "delete a flow key alone",
		src:  "m: {a, b: 1}\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			m := field(r, "m")
			return []yamltext.Edit{yamltext.Delete(m, m.Content[0])}
		},
		want: "m: {b: 1}\n",
	},
	{
		name: "a pair after an empty value tagged on the next line",
		src:  "spec:\n  a:\n    !!null\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a:\n    !!null\n  b: x\n",
	},
	{
		name: "delete a key whose block scalar is indented by one",
		src:  "spec:\n  a: |\n   x\n  b: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		want: "spec:\n  b: 1\n",
	},
	{
		name: "delete a key whose items hold a compact list",
		src:  "spec:\n  l:\n  - - a\n  b: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		refused: true,
	},
	{
		name: "delete a key whose items end in a block scalar",
		src:  "spec:\n  l:\n  - a\n  - b: |\n      x\n  c: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		want: "spec:\n  c: 1\n",
	},
	{
		name: "delete a key whose quoted value spans lines",
		src:  "spec:\n  a: \"x\n    y\"\n  b: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		want: "spec:\n  b: 1\n",
	},
	{
		name: "a pair after a quoted value spanning lines",
		src:  "spec:\n  a: \"x\n    y\"\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: \"x\n    y\"\n  b: x\n",
	},
	{
		name: "a pair after a quoted value",
		src:  "spec:\n  a: 'x'\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: 'x'\n  b: x\n", sure: true,
	},
	{
		name: "delete the last key, a block scalar",
		src:  "spec:\n  a: 1\n  b: |\n    x\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[2])}
		},
		want: "spec:\n  a: 1\n",
	},
	{
		name: "a pair after a double-quoted value with an escaped quote",
		src:  "spec:\n  a: \"x\\\"y\"\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: \"x\\\"y\"\n  b: x\n", sure: true,
	},
	{
		name: "a pair after a single-quoted value with a doubled quote",
		src:  "spec:\n  a: 'it''s'\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: 'it''s'\n  b: x\n", sure: true,
	},
	{
		name: "a pair after a single-quoted value ending the text",
		src:  "spec:\n  a: 'x'",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\n  a: 'x'\n  b: x", sure: true,
	},
	{
		name: "a flow list whose plain item opens a quote never closed",
		src:  "l: [it's]\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", str("c"))}
		},
		refused: true,
	},
	{
		name: "set a tagged quoted scalar",
		src:  "a: !!str \"x\"\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Set(field(r, "a"), "c")}
		},
		refused: true,
	},
	{
		name: "a field in the style of a text indented by 4",
		src:  "spec:\n    a:\n        b: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str("x"), seq(str("y"))}}
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "m", m)}
		},
		want: "spec:\n    a:\n        b: 1\n    m:\n        x:\n          - y\n", sure: true,
	},
	{
		name: "a field in the style of a text with a compact list first",
		src:  "l:\n- a\nspec:\n    a: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str("x"), seq(str("y"))}}
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "m", m)}
		},
		want: "l:\n- a\nspec:\n    a: 1\n    m:\n        x:\n          - y\n", sure: true,
	},
	{
		name: "a field in the style of a text with a wide list",
		src:  "spec:\n  l:\n    - a\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str("x"), seq(str("y"))}}
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "m", m)}
		},
		want: "spec:\n  l:\n    - a\n  m:\n    x:\n      - y\n", sure: true,
	},
	{
		name: "two pairs at one offset keep their order",
		src:  "spec:\n  a: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Insert(spec, nil, "c", str("x")), yamltext.Insert(spec, nil, "d", str("y"))}
		},
		want: "spec:\n  a: 1\n  c: x\n  d: y\n", sure: true,
	},
	{
		name: "no edit",
		src:  "spec:\n  a: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return nil
		},
		want: "spec:\n  a: 1\n", sure: true,
	},
	{
		name: "delete the last line without a line end",
		src:  "spec:\n  a: 1\n  b: 2",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[len(spec.Content)-2])}
		},
		want: "spec:\n  a: 1",
	},
	{
		name: "delete the last line without a line end, CR LF",
		src:  "spec:\r\n  a: 1\r\n  b: 2",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[len(spec.Content)-2])}
		},
		want: "spec:\r\n  a: 1",
	},
	{
		name: "delete the last two lines without a line end",
		src:  "spec:\n  a: 1\n  b: 2\n  c: 3",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[2]), yamltext.Delete(spec, spec.Content[4])}
		},
		want: "spec:\n  a: 1",
	},
	{
		name: "delete the whole text",
		src:  "a: 1",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Delete(r, r.Content[0])}
		},
		want: "",
	},
	{
		name: "a pair in text broken by CR alone",
		src:  "spec:\r  a: 1\r",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "spec:\r  a: 1\r  b: x\r", sure: true,
	},
	{
		name: "a pair in text broken by CR alone from its first byte",
		src:  "\rspec:\r  a: 1\r",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		want: "\rspec:\r  a: 1\r  b: x\r", sure: true,
	},
	{
		name: "text broken by CR alone and LF",
		src:  "spec:\r  a: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		refused: true,
	},
	{
		name: "a key before the first line's comment",
		src:  "# about a\na: 1\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(r, r.Content[0], "c", str("d"))}
		},
		want: "c: d\n# about a\na: 1\n", sure: true,
	},
	{
		name: "text of CR LF with a lone CR at its end",
		src:  "spec:\r\n  a: 1\r",
		edits: func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(r, "spec"), nil, "b", str("x"))}
		},
		refused: true,
	},
	{
		name: "delete a key whose block scalar has two lines",
		src:  "spec:\n  a: |\n    x\n    y\n  d: 3\n",
		edits: func(r *yaml.Node) []yamltext.Edit {
			spec := field(r, "spec")
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		want: "spec:\n  d: 3\n",
	},
}

// TestSpliceExact: each case gives its exact text and sureness, and the
// text parses back as the tree Apply gives for the same edits; a refused
// case gives ErrNotSpliceable.
func TestSpliceExact(t *testing.T) {
	t.Parallel()
	for _, tc := range spliceExact {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, sure, err := spliceSource(t, tc.src, tc.edits)
			if tc.refused {
				if !errors.Is(err, yamltext.ErrNotSpliceable) {
					t.Fatalf("got %q, %v, want ErrNotSpliceable", out, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want || sure != tc.sure {
				t.Errorf("got\n%q (sure %v)\nwant\n%q (sure %v)", out, sure, tc.want, tc.sure)
			}
			if tc.broken || len(out) == 0 {
				return // nothing to parse back
			}
			parsesAsApplied(t, tc.src, out, root, tc.edits)
		})
	}
}
