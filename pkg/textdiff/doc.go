// Package textdiff writes unified diffs of texts, line by line, as diff -u
// and kubectl diff show them: for --diff, which shows what a command would
// change before it changes anything.
package textdiff
