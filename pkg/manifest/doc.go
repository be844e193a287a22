// Package manifest streams multi-document YAML one document at a time,
// keeping every byte between documents (separators, comments, line ends)
// exactly as it was. Memory is bounded by the largest document, not the
// stream.
//
// Use Process to run a function over every document of a reader and write
// the result; documents the function leaves alone are written as their
// original bytes. ProcessDocuments does the same and tells the function on
// which line of the stream each document starts, so that reports can name
// lines of the file rather than of the document. ProcessAhead is
// ProcessDocuments with part of each document's work (parsing it) done
// on every core, ahead of the document being handled, and the results
// handed over in order; Document.SyntaxError
// locates a document that is not YAML at the line and column of the
// problem.
package manifest
