// Package gonode writes a yaml.Node tree as Go source: a package-level
// variable whose value is the tree itself, which the Go linker lays out
// as data, so a program that needs the tree at start-up (the embedded
// default template) finds it built instead of parsing its text.
//
// Every field of every node is written (kind, style, tag, value, the
// three comments, line and column), so the tree is the one yaml.v3's
// decoder gives for the same text; the caller checks that in a test
// (pkg/inject's TestDefaultTemplateCompiled). Trees with anchors or
// aliases are refused: a node shared by two parents cannot be written as
// one literal.
package gonode
