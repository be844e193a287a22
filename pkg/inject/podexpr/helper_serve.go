package podexpr

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

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
