// Package yamltext edits the text of a YAML or JSON document the way a
// person would: it changes the lines an edit is about and keeps every other
// byte as the author wrote it.
//
// What it keeps: comments, key order, quoting and scalar styles,
// indentation (the author's step and whether sequences are indented under
// their key), anchors and aliases, CRLF and lone-CR line ends, a missing
// final line end, and the layout of flow and JSON collections (their
// separators and spacing, one item a line or all on one line). The
// diff between the input and the output is only the changed lines: the
// inserted lines, the removed ones, and the line of a scalar that was set.
//
// How to use it: parse the document with Decode (which also reads JSON's
// "\/" escape and refuses text holding a second document), plan the change
// on the tree as Edits (Insert, Delete, Fill, Nullify, Set), then give the
// original text and the edits to Splice:
//
//	doc, err := yamltext.Decode(src)
//	spec := ... // a node of doc
//	out, sure, err := yamltext.Splice(src, []yamltext.Edit{
//		yamltext.Insert(spec, nil, "replicas", replicas),
//	}, nil)
//
// DecodeBatch is Decode on the texts of consecutive documents, with one
// parser for those it can read as one stream with the same results: a
// stream of small documents then spends far less on parsers' set-up.
//
// Positions come from the nodes, so plan every edit against the tree as
// Decode returned it, and splice once. Splice returns ErrNotSpliceable for
// an edit it cannot make in place (an alias to edit, a multi-line flow
// scalar, ...). When sure is false a position depended on more than the
// plain indentation rules: parse the output again and compare it (Equal)
// with the tree the same edits gave through Apply, and serialize that tree
// when they differ. Apply is also the way to edit a tree with no text.
//
// A RenderCache shared by many Splice calls keeps the text of inserts that
// name their Origin, for streams that insert the same items into many
// documents.
//
// The package knows nothing of what the edits mean: it imports no other
// package of this module.
package yamltext
