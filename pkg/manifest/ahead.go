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
// small document's work, so documents go over in batches. A batch is also
// cut at maxBatchPieces pieces, so that a long run of text without
// documents (comments, separators) is not gathered whole.
const AheadBatch = 8

const maxBatchPieces = 4 * AheadBatch

// maxPreparing caps the preparing goroutines: the caller's goroutine,
// which handles every document in order, keeps up with about two, and
// each one holds a batch of parsed documents.
const maxPreparing = 4

// ProcessAhead is ProcessDocuments with the work on each document split in
// two: prepare runs on other goroutines, one per core (up to
// maxPreparing), which prepare the next documents in batches while fn
// handles the documents in order, each with what prepare returned for it,
// and writes the output. prepare is given a batch of consecutive
// documents (so that it can share work between them, as one parser) and
// returns one result per document, in their order; the slice is valid
// only during the call (the documents' texts stay valid). It must not share
// state with fn or with its other calls (parsing text does not); fn runs
// on the caller's goroutine, so it needs no locks. A few batches are
// prepared ahead at most, so memory stays bounded by a few dozen
// documents, not by the stream. With one core (GOMAXPROCS 1), or for a
// stream shorter than SmallStream, it is ProcessDocuments with prepare
// called on each document alone, just before fn.
//
// The output, the documents fn sees and the errors are those of
// ProcessDocuments. Reading is over when ProcessAhead returns (so the
// caller may look at its reader then), whether it returns an error or fn
// panics; after an error of w, it stops reading at the next document, once
// the read in progress returns.
func ProcessAhead[P any](r io.Reader, w io.Writer, prepare func([]Document) []P, fn func(Document, P) []byte) error {
	inline := func(r io.Reader) error {
		return ProcessDocuments(r, w, func(d Document) []byte { return fn(d, prepare([]Document{d})[0]) })
	}
	workers := min(runtime.GOMAXPROCS(0), maxPreparing)
	if workers == 1 {
		// One core (Go sizes GOMAXPROCS to a container's CPU limit): the
		// other goroutines would only take turns with this one.
		return inline(r)
	}
	br := bufio.NewReaderSize(r, SmallStream)
	if head, err := br.Peek(SmallStream); err != nil {
		// The whole stream, or all of it before a read error: starting the
		// other goroutines would cost more than its documents. What Peek
		// read ends with its error (Peek forgets it; reading r again after
		// the end could block on a terminal).
		return inline(io.MultiReader(bytes.NewReader(head), errorReader{err}))
	}
	return processAhead(br, w, workers, prepare, fn)
}

// errorReader is a reader whose every read fails with err.
type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// processAhead is ProcessAhead with workers preparing goroutines.
func processAhead[P any](r io.Reader, w io.Writer, workers int, prepare func([]Document) []P, fn func(Document, P) []byte) error {
	type piece struct {
		text     []byte
		doc      Document
		isDoc    bool // false for text written through
		prepared P
		err      error // reading failed here; the last piece
	}
	type batch struct {
		pieces   []piece
		prepared chan struct{} // closed once every document is prepared
	}
	// inOrder holds the batches as read, for fn; toPrepare hands them to
	// the workers. inOrder's capacity bounds the batches read ahead.
	inOrder := make(chan *batch, workers+1)
	toPrepare := make(chan *batch)
	stop := make(chan struct{}) // closed when the caller returns
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var preparing sync.WaitGroup
	for range workers {
		preparing.Add(1)
		go func() {
			defer preparing.Done()
			var docs []Document
			for b := range toPrepare {
				docs = docs[:0]
				for _, p := range b.pieces {
					if p.isDoc {
						docs = append(docs, p.doc)
					}
				}
				prepared := prepare(docs)
				for i, k := 0, 0; i < len(b.pieces); i++ {
					if p := &b.pieces[i]; p.isDoc {
						p.prepared = prepared[k]
						k++
					}
				}
				close(b.prepared)
			}
		}()
	}
	send := func(b *batch) error {
		b.prepared = make(chan struct{})
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
			if stopped() {
				return errStopped
			}
			p := piece{text: bytes.Clone(text)} // scan reuses its buffer
			if d != nil {
				p.doc, p.isDoc = *d, true
				p.doc.Text = p.text
				docs++
			}
			b.pieces = append(b.pieces, p)
			if docs < AheadBatch && len(b.pieces) < maxBatchPieces {
				return nil
			}
			full := b
			b, docs = &batch{}, 0
			return send(full)
		})
		if errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			b.pieces = append(b.pieces, piece{err: err})
		}
		if len(b.pieces) > 0 {
			_ = send(b)
		}
	}()
	// However the caller's goroutine leaves (an error, or a panic of fn),
	// the reader stops and is waited for: reading is over on return.
	defer func() {
		close(stop)
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
			if p.isDoc {
				out = fn(p.doc, p.prepared)
			}
			if _, err := bw.Write(out); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// errStopped ends the reader of ProcessAhead once its caller returned.
var errStopped = errors.New("stopped: the caller returned")
