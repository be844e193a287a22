package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// seenDocument is what a handler saw of one document.
type seenDocument struct {
	Index, Line int
	Text        string
}

// TestProcessAheadAsProcessDocuments: the same streams give the same
// documents, in the same order with the same positions, and the same
// output as ProcessDocuments; each document comes with what prepare
// returned for it.
func TestProcessAheadAsProcessDocuments(t *testing.T) {
	twoCores(t)
	streams := map[string]string{
		"empty":                  "",
		"one document":           "a: 1\n",
		"no final newline":       "a: 1",
		"comments between":       "# header\n---\na: 1\n# about b\n--- # b\nb: 2\n...\n---\n# nothing\n---\nc: 3\n",
		"crlf":                   "a: 1\r\n---\r\nb: 2\r\n",
		"only comments":          "# license\n",
		"long line":              "a: " + strings.Repeat("x", 200<<10) + "\n---\nb: 2\n",
		"JSON values":            "{\"a\":1}\n{\"b\":[1,\"}\"]}\r\n\n  {\"c\":{}}{\"d\":2} \n---\ne: 5\n",
		"more than ahead":        strings.Repeat("a: 1\n---\n# c\n---\n", 5*AheadBatch),
		"larger than small":      strings.Repeat("a: 1\n---\n# c\n---\n{\"b\":2}{\"c\":3}\n---\n", SmallStream/8),
		"JSON value, no newline": "{\"a\":1}{\"b\":2}",
	}
	for name, in := range streams {
		t.Run(name, func(t *testing.T) {
			var want []seenDocument
			var wantOut bytes.Buffer
			if err := ProcessDocuments(strings.NewReader(in), &wantOut, func(d Document) []byte {
				want = append(want, seenDocument{d.Index, d.Line, string(d.Text)})
				return bytes.ToUpper(d.Text)
			}); err != nil {
				t.Fatal(err)
			}
			var got []seenDocument
			var out bytes.Buffer
			err := ProcessAhead(strings.NewReader(in), &out, func(batch []Document) []string {
				prepared := make([]string, len(batch))
				for i, d := range batch {
					if d.Index != batch[0].Index+i {
						t.Errorf("a batch of documents %d to %d holds document %d", batch[0].Index, batch[0].Index+len(batch)-1, d.Index)
					}
					prepared[i] = fmt.Sprintf("%d@%d:%s", d.Index, d.Line, d.Text)
				}
				return prepared
			}, func(d Document, prepared string) []byte {
				if mine := fmt.Sprintf("%d@%d:%s", d.Index, d.Line, d.Text); prepared != mine {
					t.Errorf("document %d came with what was prepared for another: %.40q", d.Index, prepared)
				}
				got = append(got, seenDocument{d.Index, d.Line, string(d.Text)})
				return bytes.ToUpper(d.Text)
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("documents:\n%.300v\nProcessDocuments:\n%.300v", got, want)
			}
			if out.String() != wantOut.String() {
				t.Errorf("output:\n%.300q\nProcessDocuments:\n%.300q", out.String(), wantOut.String())
			}
		})
	}
}

// failingReader gives text, then err.
type failingReader struct {
	text io.Reader
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	n, err := r.text.Read(p)
	if err == io.EOF {
		return n, r.err
	}
	return n, err
}

// TestProcessAheadReadError: the documents read before the error are
// handled and written, and the error is ProcessDocuments'.
func TestProcessAheadReadError(t *testing.T) {
	twoCores(t)
	for _, prefix := range []string{"", strings.Repeat("z: 0\n---\n", SmallStream/4)} {
		readError(t, prefix)
	}
}

// readError checks a read error after prefix and three documents.
func readError(t *testing.T, prefix string) {
	in := prefix + "a: 1\n---\nb: 2\n---\nc: "
	broken := errors.New("disk gone")
	run := func(process func(io.Reader, io.Writer, func(Document) []byte) error) (string, string, error) {
		var docs []string
		var out bytes.Buffer
		err := process(&failingReader{text: strings.NewReader(in), err: broken}, &out, func(d Document) []byte {
			docs = append(docs, string(d.Text))
			return d.Text
		})
		return strings.Join(docs, "|"), out.String(), err
	}
	wantDocs, _, wantErr := run(ProcessDocuments)
	docs, _, err := run(func(r io.Reader, w io.Writer, fn func(Document) []byte) error {
		return ProcessAhead(r, w, each(func(Document) struct{} { return struct{}{} }), func(d Document, _ struct{}) []byte { return fn(d) })
	})
	if !errors.Is(err, broken) || wantErr == nil || err.Error() != wantErr.Error() {
		t.Errorf("error = %v, want %v (as ProcessDocuments)", err, wantErr)
	}
	if docs != wantDocs || !strings.HasSuffix(docs, "a: 1\n|b: 2\n") {
		t.Errorf("documents handled = %.100q, ProcessDocuments: %.100q", docs, wantDocs)
	}
}

// endlessReader is a slow stream of documents that never ends, each
// larger than ProcessAhead's output buffer (so that the first write
// reaches the writer); it notes a read in progress or begun after done is
// set.
type endlessReader struct {
	at                      int
	done, reading, lateRead atomic.Bool
}

var endlessDocument = "a: " + strings.Repeat("x", 100<<10) + "\n---\n"

func (r *endlessReader) Read(p []byte) (int, error) {
	r.reading.Store(true)
	defer r.reading.Store(false)
	if r.done.Load() {
		r.lateRead.Store(true)
	}
	time.Sleep(time.Millisecond) // most of the reader's time is spent here
	n := copy(p, endlessDocument[r.at:])
	r.at = (r.at + n) % len(endlessDocument)
	return n, nil
}

// returned notes that ProcessAhead returned: a read in progress, or
// begun from now on, is late.
func (r *endlessReader) returned() {
	r.done.Store(true)
	if r.reading.Load() {
		r.lateRead.Store(true)
	}
}

// checkNoLateRead fails the test if the stream was read after returned
// (waiting a little for a reader that outlived ProcessAhead).
func (r *endlessReader) checkNoLateRead(t *testing.T) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	if r.lateRead.Load() {
		t.Error("the stream was read after ProcessAhead returned")
	}
}

type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

// TestProcessAheadWriteErrorStopsReading: when the output cannot be
// written, ProcessAhead returns that error on an endless stream, and
// nothing reads the stream once it returned.
func TestProcessAheadWriteErrorStopsReading(t *testing.T) {
	twoCores(t)
	r := &endlessReader{}
	returned := make(chan error, 1)
	go func() {
		returned <- ProcessAhead(r, brokenWriter{}, each(func(d Document) int { return d.Index }), func(d Document, _ int) []byte { return d.Text })
	}()
	select {
	case err := <-returned:
		r.returned()
		if err == nil || !strings.Contains(err.Error(), "pipe closed") {
			t.Errorf("error = %v, want the writer's", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ProcessAhead did not return after its writer failed")
	}
	r.checkNoLateRead(t)
}

// TestProcessAheadPreparesAhead: the next batch of documents is prepared
// while one is being handled (the handler of document 0 waits for the
// preparation of the first document of the next batch).
func TestProcessAheadPreparesAhead(t *testing.T) {
	twoCores(t)
	next := make(chan struct{})
	in := strings.Repeat("a: 1\n# "+strings.Repeat("-", SmallStream/AheadBatch)+"\n---\n", AheadBatch+1)
	err := ProcessAhead(strings.NewReader(in), io.Discard, each(func(d Document) int {
		if d.Index == AheadBatch {
			close(next)
		}
		return d.Index
	}), func(d Document, _ int) []byte {
		if d.Index == 0 {
			select {
			case <-next:
			case <-time.After(10 * time.Second):
				t.Error("the next batch was not prepared while document 0 was handled")
			}
		}
		return d.Text
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProcessAheadOneCore: with one core, each document is prepared just
// before it is handled, on the caller's goroutine, with the same output.
func TestProcessAheadOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // these tests are not parallel: GOMAXPROCS is the process's
	checkInline(t, strings.Repeat("a: 1\n---\n# c\n---\n", SmallStream/8))
}

// TestProcessAheadSmallStream: so is a stream smaller than SmallStream,
// on any number of cores.
func TestProcessAheadSmallStream(t *testing.T) {
	twoCores(t)
	checkInline(t, strings.Repeat("a: 1\n---\n# c\n---\n", AheadBatch+2))
}

// checkInline checks that ProcessAhead prepares each document of in just
// before handling it, and writes in as it is.
func checkInline(t *testing.T, in string) {
	t.Helper()
	var steps []string
	var out bytes.Buffer
	err := ProcessAhead(strings.NewReader(in), &out, each(func(d Document) int {
		steps = append(steps, fmt.Sprintf("prepare %d", d.Index))
		return d.Index
	}), func(d Document, prepared int) []byte {
		steps = append(steps, fmt.Sprintf("handle %d", prepared))
		return d.Text
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, step := range steps {
		want := fmt.Sprintf("prepare %d", i/2)
		if i%2 == 1 {
			want = fmt.Sprintf("handle %d", i/2)
		}
		if step != want {
			t.Fatalf("step %d is %q, want %q (steps: %.200q)", i, step, want, steps)
		}
	}
	if len(steps) != 2*strings.Count(in, "a: 1") || out.String() != in {
		t.Errorf("%d steps, output %.100q", len(steps), out.String())
	}
}

// twoCores gives the test at least two cores, so that ProcessAhead uses
// its other goroutines on any machine. Tests that call it are not
// parallel: GOMAXPROCS is the process's.
func twoCores(t *testing.T) {
	if n := runtime.GOMAXPROCS(0); n < 2 {
		runtime.GOMAXPROCS(2)
		t.Cleanup(func() { runtime.GOMAXPROCS(n) })
	}
}

// onceFailingReader gives text, then err once, then more text: a reader
// must not be read again after an error it was given.
type onceFailingReader struct {
	parts []string
	err   error
	read  int
}

func (r *onceFailingReader) Read(p []byte) (int, error) {
	r.read++
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	part := r.parts[0]
	r.parts = r.parts[1:]
	if part == "" {
		return 0, r.err
	}
	return copy(p, part), nil
}

// TestProcessAheadReadsNothingAfterTheEnd: a small stream is not read
// again after its end or its error (a terminal would wait for a second
// end of input; text after an error would be handled), as
// ProcessDocuments does not.
func TestProcessAheadReadsNothingAfterTheEnd(t *testing.T) {
	twoCores(t)
	broken := errors.New("timed out")
	for _, tc := range []struct {
		name  string
		parts []string
	}{
		{"end", []string{"a: 1\n---\nb: 2\n"}},
		{"error", []string{"a: 1\n---\nb: 2\n", "", "---\nc: 3\n"}},
	} {
		run := func(process func(io.Reader, io.Writer, func(Document) []byte) error) (string, error, int) {
			r := &onceFailingReader{parts: append([]string(nil), tc.parts...), err: broken}
			var docs []string
			err := process(r, io.Discard, func(d Document) []byte {
				docs = append(docs, string(d.Text))
				return d.Text
			})
			return strings.Join(docs, "|"), err, r.read
		}
		wantDocs, wantErr, wantReads := run(ProcessDocuments)
		docs, err, reads := run(func(r io.Reader, w io.Writer, fn func(Document) []byte) error {
			return ProcessAhead(r, w, each(func(Document) int { return 0 }), func(d Document, _ int) []byte { return fn(d) })
		})
		if docs != wantDocs || fmt.Sprint(err) != fmt.Sprint(wantErr) || reads != wantReads {
			t.Errorf("%s: documents %q, error %v, %d reads; ProcessDocuments: %q, %v, %d reads", tc.name, docs, err, reads, wantDocs, wantErr, wantReads)
		}
	}
}

// TestProcessAheadPanic: when fn panics, the panic reaches the caller
// (instead of a reader blocked for ever), and reading is over by then.
func TestProcessAheadPanic(t *testing.T) {
	twoCores(t)
	r := &endlessReader{}
	recovered := make(chan any, 1)
	go func() {
		defer func() {
			r.returned()
			recovered <- recover()
		}()
		_ = ProcessAhead(r, io.Discard, each(func(d Document) int { return d.Index }), func(d Document, _ int) []byte {
			if d.Index == 2 {
				panic("handler failed")
			}
			return d.Text
		})
	}()
	select {
	case v := <-recovered:
		if v != "handler failed" {
			t.Errorf("recovered %v, want the handler's panic", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ProcessAhead did not return after its handler panicked")
	}
	r.checkNoLateRead(t)
}

// each is a prepare for ProcessAhead that prepares each document of a
// batch with f.
func each[P any](f func(Document) P) func([]Document) []P {
	return func(batch []Document) []P {
		prepared := make([]P, len(batch))
		for i, d := range batch {
			prepared[i] = f(d)
		}
		return prepared
	}
}
