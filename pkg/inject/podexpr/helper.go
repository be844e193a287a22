package podexpr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The helper: the programs that do not link cel-go (inject-fn and
// kubectl-inject, whose start-up cel-go's initialisers would nearly
// double) compile and run the expressions the subset's evaluator leaves
// to cel-go in kinject-cel, a helper process started on first need and
// kept for the rest of the run. The embedded default's expressions never
// need it unless the subset's evaluator is unsure (an error, an alias, a
// comparison across types). A message is one JSON line each way; the Pod
// travels as JSON whose numbers keep their type (helperValue).

// HelperName is the helper program. It lies beside the program that runs
// it (krew, the Helm plugin's archive and the function's image put it
// there), or on PATH; HelperEnv names another path.
const HelperName = "kinject-cel"

// HelperEnv is the environment variable that gives the helper's path.
const HelperEnv = "KINJECT_CEL"

// maxHelperValues bounds the values of one Pod sent to the helper: a pod
// template whose aliases expand beyond it (an alias bomb) is refused, not
// expanded.
const maxHelperValues = 1 << 22

// maxHelperDepth bounds the nesting of a Pod sent to the helper: an alias
// to one of its own ancestors nests without end.
const maxHelperDepth = 1000

// helperRequest is one message to the helper: compile Text, or evaluate
// each of Texts over Object.
type helperRequest struct {
	Op      string          `json:"op"` // "compile" or "eval"
	Text    string          `json:"text,omitempty"`
	Checked string          `json:"checked,omitempty"`
	Texts   []string        `json:"texts,omitempty"`
	Object  json.RawMessage `json:"object,omitempty"`
}

// helperResponse is the helper's answer: cel-go's error, or the result by
// its type (null, int, string, or the name of another CEL type); to an
// eval, one of these for each text, in Results.
type helperResponse struct {
	Error   string           `json:"error,omitempty"`
	Type    string           `json:"type,omitempty"`
	Int     int64            `json:"int,omitempty"`
	String  string           `json:"string,omitempty"`
	Results []helperResponse `json:"results,omitempty"`
}

// otherValue is a helper's result of a type no parameter takes.
type otherValue string

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

// errExpression marks cel-go's own error, passed on as it is.
type errExpression struct{ msg string }

func (e errExpression) Error() string { return e.msg }

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

// value is one expression's result: cel-go's error, or its value.
func (r helperResponse) value() (any, error) {
	if r.Error != "" {
		return nil, errExpression{r.Error}
	}
	switch r.Type {
	case "null":
		return nil, nil
	case "int":
		return r.Int, nil
	case "string":
		return r.String, nil
	}
	return otherValue(r.Type), nil
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
	name := HelperName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var beside string
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err == nil {
		beside = filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
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

// ServeHelper is kinject-cel: it answers requests from r on w, compiling
// with c, until r ends.
func ServeHelper(r io.Reader, w io.Writer, c Compiler) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	programs := map[string]Program{}
	for {
		var req helperRequest
		if err := dec.Decode(&req); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read a request: %w", err)
		}
		resp := serve(req, c, programs)
		if err := enc.Encode(resp); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
}

func serve(req helperRequest, c Compiler, programs map[string]Program) helperResponse {
	program := func(text, checked string) (Program, error) {
		if prg, ok := programs[text]; ok {
			return prg, nil
		}
		prg, err := c(text, checked)
		if err == nil && len(programs) < maxSharedExpressions {
			programs[text] = prg
		}
		return prg, err
	}
	switch req.Op {
	case "compile":
		if _, err := program(req.Text, req.Checked); err != nil {
			return helperResponse{Error: err.Error()}
		}
		return helperResponse{Type: "null"}
	case "eval":
	default:
		return helperResponse{Error: fmt.Sprintf("%s: unknown request %q", HelperName, req.Op)}
	}
	object, err := readHelperValue(req.Object)
	if err != nil {
		return helperResponse{Error: fmt.Sprintf("%s: the Pod: %v", HelperName, err)}
	}
	m, ok := object.(map[string]any)
	if !ok {
		return helperResponse{Error: fmt.Sprintf("%s: the Pod is not an object", HelperName)}
	}
	resp := helperResponse{Results: make([]helperResponse, len(req.Texts))}
	for i, text := range req.Texts {
		prg, err := program(text, "")
		if err == nil {
			resp.Results[i] = result(prg(m))
		} else {
			resp.Results[i] = helperResponse{Error: err.Error()}
		}
	}
	return resp
}

// result is one evaluation's answer.
func result(v any, err error) helperResponse {
	if err != nil {
		return helperResponse{Error: err.Error()}
	}
	switch v := v.(type) {
	case nil:
		return helperResponse{Type: "null"}
	case int64:
		return helperResponse{Type: "int", Int: v}
	case string:
		return helperResponse{Type: "string", String: v}
	}
	return helperResponse{Type: fmt.Sprint(v)}
}

// helperValue writes a plain value (podObject's) as JSON whose numbers
// keep their type: a float always has a point or an exponent (1.0, not 1),
// an infinity is ±1e999, and an int or a uint has neither, so that
// readHelperValue gives back the very values cel-go would have read here.
// NaN has no JSON form and is refused; so is a pod template whose aliases
// nest without end or expand beyond maxHelperValues.
func helperValue(v any) ([]byte, error) {
	var b []byte
	budget := maxHelperValues
	b, err := appendHelperValue(b, v, 0, &budget)
	if err != nil {
		return nil, fmt.Errorf("the pod template cannot be handed to %s: %w", HelperName, err)
	}
	return b, nil
}

func appendHelperValue(b []byte, v any, depth int, budget *int) ([]byte, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("it holds more than %d values once its aliases are expanded", maxHelperValues)
	}
	if depth > maxHelperDepth {
		return nil, fmt.Errorf("it nests deeper than %d (an alias to one of its own parents?)", maxHelperDepth)
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case float64:
		switch {
		case math.IsNaN(v):
			return nil, errors.New("it holds .nan, which JSON (and so a Pod) cannot hold")
		case math.IsInf(v, 1):
			return append(b, "1e999"...), nil
		case math.IsInf(v, -1):
			return append(b, "-1e999"...), nil
		}
		s := strconv.FormatFloat(v, 'g', -1, 64)
		b = append(b, s...)
		if !strings.ContainsAny(s, ".e") {
			b = append(b, ".0"...)
		}
		return b, nil
	case string:
		q, err := json.Marshal(v)
		return append(b, q...), err
	case []any:
		b = append(b, '[')
		for i, item := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendHelperValue(b, item, depth+1, budget); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b = append(b, ',')
			}
			q, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			b = append(append(b, q...), ':')
			if b, err = appendHelperValue(b, v[k], depth+1, budget); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("a value of type %T", v)
}

// readHelperValue reads what helperValue wrote.
func readHelperValue(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return typedNumbers(v)
}

func typedNumbers(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !math.IsInf(f, 0) {
				return nil, err
			}
			return f, nil
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		return strconv.ParseUint(s, 10, 64)
	case []any:
		for i, item := range v {
			t, err := typedNumbers(item)
			if err != nil {
				return nil, err
			}
			v[i] = t
		}
	case map[string]any:
		for k, item := range v {
			t, err := typedNumbers(item)
			if err != nil {
				return nil, err
			}
			v[k] = t
		}
	}
	return v, nil
}
