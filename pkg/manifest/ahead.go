package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// SmallStream is the size below which ProcessAhead handles a stream
// on the caller's goroutine alone: about 40 manifests, which take less
// time than starting the other goroutines' threads saves.
const SmallStream = 64 << 10

// AheadBatch is how many documents go to a preparing goroutine at a
// time: a hand-over wakes another goroutine, which costs more than a
// small document's work, so documents go over in batches.
const AheadBatch = 8

// ProcessAhead is ProcessDocuments with the work on each document split in
// two: prepare runs on other goroutines, one per core, which prepare the
// next documents in batches while fn handles the documents in order, each
// with what prepare returned for it, and writes the output. prepare must
// not share state with fn or with itself (parsing a document's text does
// not); fn runs on the caller's goroutine, so it needs no locks. A few
// batches are prepared ahead at most, so memory stays bounded by a few
// dozen documents, not by the stream. With one core (GOMAXPROCS 1), or for
// a stream shorter than SmallStream, it is ProcessDocuments with prepare
// called just before fn.
//
// The output, the documents fn sees and the errors are those of
// ProcessDocuments. Reading is over when ProcessAhead returns, so the
// caller may look at its reader then; after an error of w, it stops
// reading at the next batch.
func ProcessAhead[P any](r io.Reader, w io.Writer, prepare func(Document) P, fn func(Document, P) []byte) error {
	type piece struct {
		text     []byte
		doc      *Document // nil for text written through
		prepared P
		err      error // reading failed here; the last piece
	}
	type batch struct {
		pieces   []piece
		prepared chan struct{} // closed once every document is prepared
	}
	workers := runtime.GOMAXPROCS(0)
	br := bufio.NewReaderSize(r, SmallStream)
	if _, err := br.Peek(SmallStream); workers == 1 || err != nil {
		// One core (Go sizes GOMAXPROCS to a container's CPU limit): the
		// other goroutines would only take turns with this one. A small
		// stream (or one that failed early): starting them would cost more
		// than its documents.
		return ProcessDocuments(br, w, func(d Document) []byte { return fn(d, prepare(d)) })
	}
	r = br
	// inOrder holds the batches as read, for fn; toPrepare hands them to
	// the workers. inOrder's capacity bounds the batches read ahead.
	inOrder := make(chan *batch, workers+1)
	toPrepare := make(chan *batch)
	stop := make(chan struct{})
	var preparing sync.WaitGroup
	for range workers {
		preparing.Add(1)
		go func() {
			defer preparing.Done()
			for b := range toPrepare {
				for i := range b.pieces {
					if p := &b.pieces[i]; p.doc != nil {
						p.prepared = prepare(*p.doc)
					}
				}
				close(b.prepared)
			}
		}()
	}
	send := func(b *batch) error {
		select {
		case inOrder <- b:
		case <-stop:
			return errStopped
		}
		select {
		case toPrepare <- b:
			return nil
		case <-stop:
			return errStopped
		}
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(inOrder)
		defer close(toPrepare)
		b := &batch{}
		docs := 0
		err := scan(r, func(text []byte, d *Document) error {
			p := piece{text: bytes.Clone(text)} // scan reuses its buffer
			if d != nil {
				doc := *d
				doc.Text = p.text
				p.doc = &doc
				docs++
			}
			b.pieces = append(b.pieces, p)
			if docs < AheadBatch {
				return nil
			}
			full := b
			b, docs = &batch{}, 0
			full.prepared = make(chan struct{})
			return send(full)
		})
		if errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			b.pieces = append(b.pieces, piece{err: err})
		}
		if len(b.pieces) > 0 {
			b.prepared = make(chan struct{})
			_ = send(b)
		}
	}()
	defer func() { // reading is over when ProcessAhead returns
		<-readerDone
		preparing.Wait()
	}()
	bw := bufio.NewWriterSize(w, 64<<10)
	for b := range inOrder {
		<-b.prepared
		for _, p := range b.pieces {
			if p.err != nil {
				return p.err // the last piece: reading is over
			}
			out := p.text
			if p.doc != nil {
				out = fn(*p.doc, p.prepared)
			}
			if _, err := bw.Write(out); err != nil {
				close(stop)
				return err
			}
		}
	}
	return bw.Flush()
}

// errStopped ends the reader of ProcessAhead once writing failed.
var errStopped = errors.New("stopped: writing the output failed")
