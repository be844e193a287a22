package podexpr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/internal/sibling"
)

// The helper: the programs that do not link cel-go (inject-fn and
// kubectl-inject, whose start-up cel-go's initialisers would nearly
// double) compile and run the expressions the subset's evaluator leaves
// to cel-go in kinject-cel, a helper process started on first need and
// kept for the rest of the run. The embedded default's expressions never
// need it unless the subset's evaluator is unsure (an error, an alias, a
// comparison across types). A message is one JSON line each way; the Pod
// travels as JSON whose numbers keep their type (helperValue).

// HelperEnv is the environment variable that gives the helper's path.
const HelperEnv = "KINJECT_CEL"

// HelperCompiler is the Compiler that runs kinject-cel.
func HelperCompiler() Compiler {
	h := &helper{}
	h.start = h.startProcess
	return h.compile
}

// helper is the client side: one process for the run, one request at a
// time. An error starting or talking to it is kept and given again.
//
// A round trip to another process costs far more than an evaluation, so
// the expressions of a template that only cel-go evaluates (outside the
// subset) are evaluated together: the first one asked for over a Pod
// brings the results of all of them, and the others are answered from
// those.
type helper struct {
	mu    sync.Mutex
	start func() error // sets enc and dec
	err   error
	enc   *json.Encoder
	dec   *json.Decoder
	out   *bufio.Writer
	proc  string        // the helper's path, for messages
	stder *limitedWrite // what the helper said on stderr

	outside     []string       // the texts compiled here that are outside the subset
	lastObject  map[string]any // the Pod last evaluated over, held so that its address is not reused
	lastResults map[string]helperResult
}

// helperResult is one expression's result, or its error.
type helperResult struct {
	v   any
	err error
}

func (h *helper) compile(text, checked string) (Program, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	resp, err := h.roundTrip(helperRequest{Op: "compile", Text: text, Checked: checked})
	if err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, errExpression{resp.Error}
	}
	if _, inSubset := parseSubset(text); !inSubset && !slices.Contains(h.outside, text) {
		h.outside = append(h.outside, text)
	}
	return func(object map[string]any) (any, error) { return h.eval(text, object) }, nil
}

// eval evaluates text over object, with every other text outside the
// subset when object is not the Pod of the last evaluation.
func (h *helper) eval(text string, object map[string]any) (any, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastObject != nil && reflect.ValueOf(h.lastObject).UnsafePointer() == reflect.ValueOf(object).UnsafePointer() {
		if r, ok := h.lastResults[text]; ok {
			return r.v, r.err
		}
	}
	data, err := helperValue(object)
	if err != nil {
		return nil, err
	}
	texts := []string{text}
	for _, t := range h.outside {
		if t != text {
			texts = append(texts, t)
		}
	}
	resp, err := h.roundTrip(helperRequest{Op: "eval", Texts: texts, Object: data})
	if err != nil {
		return nil, err
	}
	if resp.Error != "" || len(resp.Results) != len(texts) {
		h.err = h.broken(fmt.Errorf("an answer of %d results to %d expressions: %s", len(resp.Results), len(texts), resp.Error))
		return nil, h.err
	}
	h.lastObject, h.lastResults = object, make(map[string]helperResult, len(texts))
	for i, t := range texts {
		v, err := resp.Results[i].value()
		h.lastResults[t] = helperResult{v, err}
	}
	r := h.lastResults[text]
	return r.v, r.err
}

// roundTrip sends req and reads the answer, with h.mu held.
func (h *helper) roundTrip(req helperRequest) (helperResponse, error) {
	if h.enc == nil && h.err == nil {
		h.err = h.start()
	}
	if h.err != nil {
		return helperResponse{}, h.err
	}
	var resp helperResponse
	err := h.enc.Encode(req)
	if err == nil {
		err = h.out.Flush()
	}
	if err == nil {
		err = h.dec.Decode(&resp)
	}
	if err != nil {
		h.err = h.broken(err)
		return helperResponse{}, h.err
	}
	return resp, nil
}

// broken words a failure to talk to the helper, with what it said.
func (h *helper) broken(err error) error {
	msg := fmt.Sprintf("%s (%s), which evaluates this expression with cel-go, stopped answering: %v", HelperName, h.proc, err)
	if h.stder != nil {
		if said := strings.TrimSpace(h.stder.String()); said != "" {
			msg += ": " + said
		}
	}
	return errors.New(msg)
}

func (h *helper) startProcess() error {
	path, err := HelperPath()
	if err != nil {
		return err
	}
	h.proc = path
	cmd := exec.Command(path)
	h.stder = &limitedWrite{max: 4 << 10}
	cmd.Stderr = h.stder
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s, which evaluates this expression with cel-go: %w", HelperName, err)
	}
	// The helper ends when its input does: when this process ends.
	h.out = bufio.NewWriter(in)
	h.enc = json.NewEncoder(h.out)
	h.dec = json.NewDecoder(bufio.NewReader(out))
	return nil
}

// HelperPath finds the helper: HelperEnv, beside this program (its
// symbolic links followed: krew links only the plugin into its bin
// directory), or on PATH.
func HelperPath() (string, error) {
	if p := os.Getenv(HelperEnv); p != "" {
		return p, nil
	}
	beside, err := sibling.Path(HelperName)
	if err == nil {
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(HelperName); err == nil {
		return p, nil
	}
	where := "on PATH"
	if beside != "" {
		where = "at " + beside + " or on PATH"
	}
	return "", fmt.Errorf("this expression needs cel-go, which %s runs, and %s is not %s (set %s to its path; krew, the Helm plugin and the function's image install it beside this program)", HelperName, HelperName, where, HelperEnv)
}

// limitedWrite keeps the first max bytes written to it.
type limitedWrite struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (w *limitedWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (w *limitedWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
