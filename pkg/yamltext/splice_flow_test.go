package yamltext_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// insertBefore inserts k: v (v alone in a sequence) into the field key of
// the root, before its child i.
func insertBefore(key string, i int, k string, v *yaml.Node) func(*yaml.Node) []yamltext.Edit {
	return func(r *yaml.Node) []yamltext.Edit {
		p := field(r, key)
		return []yamltext.Edit{yamltext.Insert(p, p.Content[i], k, v)}
	}
}

// deleteAt deletes the children is of the field key of the root, with
// text for what goes back between the brackets when they all go.
func deleteAt(key, text string, is ...int) func(*yaml.Node) []yamltext.Edit {
	return func(r *yaml.Node) []yamltext.Edit {
		p := field(r, key)
		var out []yamltext.Edit
		for _, i := range is {
			e := yamltext.Delete(p, p.Content[i])
			e.Text = text
			out = append(out, e)
		}
		return out
	}
}

// fillVolumes fills the null field volumes of the root with one item of
// every kind of value: strings plain and quoted, an int, a null, a bool,
// empty collections.
func fillVolumes(r *yaml.Node) []yamltext.Edit {
	v := item("v")
	v.Content = append(v.Content, str("n"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"}, str("l"),
		seq(str("a b"), str("1"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, str("x\ny"), str("x\u2028"),
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}, seq(), &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}))
	return []yamltext.Edit{yamltext.Fill(r, field(r, "volumes"), seq(v))}
}

// twoInto inserts two items at the end of the list a of the root.
func twoInto(r *yaml.Node) []yamltext.Edit {
	l := field(r, "a")
	return []yamltext.Edit{yamltext.Insert(l, nil, "", str("c")), yamltext.Insert(l, nil, "", str("d"))}
}

// spliceFlow are edits of flow collections and JSON, with the exact text
// Splice writes (never sure: the caller parses it again).
var spliceFlow = []struct {
	name, src, want string
	edits           func(root *yaml.Node) []yamltext.Edit
}{
	{"a flow item before the second", "l: [a, b]\n", "l: [a, c, b]\n", insertBefore("l", 1, "", str("c"))},
	{"a flow item before the first", "l: [a, b]\n", "l: [c, a, b]\n", insertBefore("l", 0, "", str("c"))},
	{"a flow pair before the second", "m: {a: 1, b: 2}\n", "m: {a: 1, c: d, b: 2}\n", insertBefore("m", 2, "c", str("d"))},
	{"a flow pair before the first", "m: {a: 1, b: 2}\n", "m: {c: d, a: 1, b: 2}\n", insertBefore("m", 0, "c", str("d"))},
	{"a flow item before one on a line of its own", "l: [\n  a,\n  b\n]\n", "l: [\n  a,\n  c,\n  b\n]\n", insertBefore("l", 1, "", str("c"))},
	{"delete the middle flow item", "l: [a, b, c]\n", "l: [a, c]\n", deleteAt("l", "", 1)},
	{"delete the first flow item", "l: [a, b, c]\n", "l: [b, c]\n", deleteAt("l", "", 0)},
	{"delete the first two flow items", "l: [a, b, c]\n", "l: [c]\n", deleteAt("l", "", 0, 1)},
	{"delete the last two flow items", "l: [a, b, c]\n", "l: [a]\n", deleteAt("l", "", 2, 1)},
	{"delete every flow item", "l: [a, b, c]\n", "l: []\n", deleteAt("l", "", 0, 1, 2)},
	{"delete every item of indented JSON", "{\"a\": [\n  \"x\",\n  \"y\"\n]}\n", "{\"a\": [\n  ]}\n", deleteAt("a", "\n  ", 0, 1)},
	{"delete the middle flow pair", "m: {a: 1, b: 2, c: 3}\n", "m: {a: 1, c: 3}\n", deleteAt("m", "", 2)},
	{"delete the last two flow pairs", "m: {a: 1, b: 2, c: 3}\n", "m: {a: 1}\n", deleteAt("m", "", 4, 2)},
	{"fill a flow null", "{volumes: null, x: 1}\n",
		"{volumes: [{name: v, n: 1, l: ['a b', '1', null, \"x\\ny\", \"x\\u2028\", true, [], {}]}], x: 1}\n", fillVolumes},
	{"fill a null of spaced JSON", "{\"volumes\": null}",
		"{\"volumes\": [{\"name\": \"v\", \"n\": 1, \"l\": [\"a b\", \"1\", null, \"x\\ny\", \"x\\u2028\", true, [], {}]}]}", fillVolumes},
	{"fill a null of compact JSON", "{\"volumes\":null}",
		"{\"volumes\":[{\"name\":\"v\",\"n\":1,\"l\":[\"a b\",\"1\",null,\"x\\ny\",\"x\\u2028\",true,[],{}]}]}", fillVolumes},
	{"fill a null of JSON indented by 2", "{\n  \"volumes\": null\n}\n",
		"{\n  \"volumes\": [\n    {\n      \"name\": \"v\",\n      \"n\": 1,\n      \"l\": [\n        \"a b\",\n        \"1\",\n        null,\n        \"x\\ny\",\n        \"x\\u2028\",\n        true,\n        [],\n        {}\n      ]\n    }\n  ]\n}\n", fillVolumes},
	{"fill a null of JSON indented by 4", "{\n    \"volumes\": null\n}\n",
		"{\n    \"volumes\": [\n        {\n            \"name\": \"v\",\n            \"n\": 1,\n            \"l\": [\n                \"a b\",\n                \"1\",\n                null,\n                \"x\\ny\",\n                \"x\\u2028\",\n                true,\n                [],\n                {}\n            ]\n        }\n    ]\n}\n", fillVolumes},
	// An escaped quote before ": " in a string is not a key's end: the
	// JSON is compact.
	{"two items into compact JSON with \\\": in a string", `{"b":"x\": y","a":[]}`, `{"b":"x\": y","a":["c","d"]}`, twoInto},
	{"two items into spaced JSON after a key ending in a backslash", `{"k\\": 1,"a":[]}`, `{"k\\": 1,"a":["c", "d"]}`, twoInto},
	{"an item into one of compact JSON", `{"a":["x"]}`, `{"a":["x","c"]}`, func(r *yaml.Node) []yamltext.Edit {
		return []yamltext.Edit{yamltext.Insert(field(r, "a"), nil, "", str("c"))}
	}},
	// A nested list is laid out from the column of the items it joins.
	{"a list into items on lines of their own", "l: [\n    a\n]\n", "l: [\n    a,\n    [\n        b\n    ]\n]\n", func(r *yaml.Node) []yamltext.Edit {
		return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", seq(str("b")))}
	}},
	{"a list into items at the margin", "l: [\na\n]\n", "l: [\na,\n[\n  b\n]\n]\n", func(r *yaml.Node) []yamltext.Edit {
		return []yamltext.Edit{yamltext.Insert(field(r, "l"), nil, "", seq(str("b")))}
	}},
	// The indentation step of multi-line JSON: its first indented line's
	// step over the line before, from 1 to 8, or 2.
	{"JSON whose only indented line is its last", "{\n    \"volumes\": null}",
		"{\n    \"volumes\": [\n        {\n            \"name\": \"v\"\n        }\n    ]}", func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Fill(r, field(r, "volumes"), seq(item("v")))}
		}},
	{"JSON whose step is learned from its first indented line", "{\n    \"volumes\": null,\n      \"b\": 1\n}",
		"{\n    \"volumes\": [\n        {\n            \"name\": \"v\"\n        }\n    ],\n      \"b\": 1\n}", func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Fill(r, field(r, "volumes"), seq(item("v")))}
		}},
	{"multi-line JSON without indentation", "{\"volumes\": null,\n\"b\": 1}",
		"{\"volumes\": [\n  {\n    \"name\": \"v\"\n  }\n],\n\"b\": 1}", func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Fill(r, field(r, "volumes"), seq(item("v")))}
		}},
	{"JSON indented by 8", "{\n        \"volumes\": null\n}",
		"{\n        \"volumes\": [\n                {\n                        \"name\": \"v\"\n                }\n        ]\n}", func(r *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Fill(r, field(r, "volumes"), seq(item("v")))}
		}},
}

// TestSpliceFlow: each case gives its exact text, which parses back as the
// tree that Apply gives for the same edits.
func TestSpliceFlow(t *testing.T) {
	t.Parallel()
	for _, tc := range spliceFlow {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, sure, err := spliceSource(t, tc.src, tc.edits)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want || sure {
				t.Errorf("got\n%q (sure %v)\nwant\n%q (not sure)", out, sure, tc.want)
			}
			parsesAsApplied(t, tc.src, out, root, tc.edits)
		})
	}
}

// TestSpliceFlowRefuses: a comment between two flow items leaves no
// separator to copy, and an insert needs its anchor among the items.
func TestSpliceFlowRefuses(t *testing.T) {
	t.Parallel()
	src := "l: [a, # x\n  b]\n"
	doc, err := yamltext.Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := yamltext.Splice([]byte(src), insertBefore("l", 1, "", str("c"))(doc.Content[0]), nil); err != yamltext.ErrNotSpliceable {
		t.Errorf("got %v, want ErrNotSpliceable", err)
	}
	// An anchor that is not an item of the list.
	src = "l: [a, b]\n"
	if doc, err = yamltext.Decode([]byte(src)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := yamltext.Splice([]byte(src), []yamltext.Edit{yamltext.Insert(field(doc.Content[0], "l"), str("b"), "", str("c"))}, nil); err != yamltext.ErrNotSpliceable {
		t.Errorf("an insert before a node not in the list: got %v, want ErrNotSpliceable", err)
	}
	// Nor in a flow mapping: a node that is not one of its keys is not
	// its first pair.
	src = "m: {a: 1, b: 2}\n"
	if doc, err = yamltext.Decode([]byte(src)); err != nil {
		t.Fatal(err)
	}
	m := field(doc.Content[0], "m")
	if out, _, err := yamltext.Splice([]byte(src), []yamltext.Edit{yamltext.Insert(m, str("a"), "c", str("d"))}, nil); err != yamltext.ErrNotSpliceable {
		t.Errorf("an insert before a node not in the mapping: got %q, %v, want ErrNotSpliceable", out, err)
	}
	if out, _, err := yamltext.Splice([]byte(src), []yamltext.Edit{yamltext.Delete(m, str("a"))}, nil); err != yamltext.ErrNotSpliceable {
		t.Errorf("a delete of a node not in the mapping: got %q, %v, want ErrNotSpliceable", out, err)
	}
}

// TestEmptyInner: what is between the brackets of an empty collection
// comes back only from multi-line JSON, where inserted items replace it.
func TestEmptyInner(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{"{\n  \"a\": [\n  ]\n}\n", "\n  "},
		{"{\n  \"a\": [ x ]\n}\n", ""},
		{"{\n  \"a\": [1]\n}\n", ""},
		{"{\"a\": [ ]}", ""},
		{"a: [ ]\n", ""},
		{"a:\n- 1\n", ""},
	} {
		doc, err := yamltext.Decode([]byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		inner := yamltext.EmptyInner([]byte(c.src))
		a := field(doc.Content[0], "a")
		for range 2 { // the text is read once
			if got := inner(a); got != c.want {
				t.Errorf("EmptyInner(%q) = %q, want %q", c.src, got, c.want)
			}
		}
	}
	if got := yamltext.EmptyInner(nil)(&yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}); got != "" {
		t.Errorf("EmptyInner of no text = %q", got)
	}
}
