package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is the output of -json.
type Report struct {
	// CompatibilityVersion is the CEL environment's version (the API
	// server's default: its binary's minor version minus one).
	CompatibilityVersion string `json:"compatibilityVersion"`
	PerCallLimit         int64  `json:"perCallLimit"`
	RuntimeBudget        int64  `json:"runtimeCELCostBudget"`
	MatchConditionBudget int64  `json:"runtimeCELCostBudgetMatchConditions"`
	// TypedMethod says how `object` was typed for the typed estimate.
	TypedMethod string       `json:"typedMethod"`
	Expressions []Expression `json:"expressions"`
	// Pod names the Pod of -pod, on which Runtime costs were measured.
	Pod string `json:"pod,omitempty"`
	// Totals are the runtime costs of one admission of the Pod, per
	// policy and budget.
	Totals []Total `json:"totals,omitempty"`
}

// Total is the runtime cost of a group of expressions that the API server
// charges to one budget when it admits the Pod.
type Total struct {
	Policy string `json:"policy"`
	What   string `json:"what"`
	Cost   int64  `json:"cost"`
	Budget int64  `json:"budget"`
}

// Expression is one CEL expression of a policy and its estimates.
type Expression struct {
	Policy string `json:"policy"`
	Kind   string `json:"kind"`
	// Field is where the expression is, e.g. spec.variables[2] (same_c0).
	Field  string `json:"field"`
	Length int    `json:"length"` // characters
	// Typed is the estimate with `object` typed from the OpenAPI schema.
	Typed Estimate `json:"typed"`
	// Dynamic is the estimate with `object` of dynamic type, as the API
	// server compiles it.
	Dynamic Estimate `json:"dynamic"`
	// Runtime is the cost the API server's own evaluator charges for the
	// expression on the Pod of -pod (absent without -pod).
	Runtime *Runtime `json:"runtime,omitempty"`
}

// Runtime is one evaluation by the API server's admission CEL evaluator.
type Runtime struct {
	// Cost is the budget the evaluation consumed: the expression's own
	// cost plus that of the variables it evaluates (lazily, once per
	// evaluation). For a variable, the cost of `variables.NAME` alone.
	Cost   int64  `json:"cost"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Estimate is a cel-go cost estimate (cost units).
type Estimate struct {
	Min       uint64 `json:"min"`
	Max       uint64 `json:"max"`
	Unbounded bool   `json:"unbounded,omitempty"` // Max >= unboundedFrom: some size is unknown
	Error     string `json:"error,omitempty"`
}

// printText writes the report as text: the environment and limits, then a
// table of the expressions and one of the totals (with -pod).
func printText(out io.Writer, rep *Report) error {
	fmt.Fprintf(out, "CEL environment: kube-apiserver admission policies, compatibility version %s\n", rep.CompatibilityVersion)
	fmt.Fprintf(out, "typed estimate: %s\n", rep.TypedMethod)
	fmt.Fprintf(out, "dynamic estimate: object of dynamic type, as the API server compiles it at run time\n")
	fmt.Fprintf(out, "limits: PerCallLimit %d per expression; RuntimeCELCostBudget %d per policy evaluation; RuntimeCELCostBudgetMatchConditions %d for the match conditions\n\n",
		rep.PerCallLimit, rep.RuntimeBudget, rep.MatchConditionBudget)
	if rep.Pod != "" {
		fmt.Fprintf(out, "runtime: cost charged by the API server's evaluator on %s\n", rep.Pod)
	}
	fmt.Fprintf(out, "unbounded: the estimate depends on a size the estimator does not know (cel-go's 2^64-1, times a cost factor)\n\n")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := "POLICY\tEXPRESSION\tCHARS\tTYPED MAX\t% OF PERCALLLIMIT\tDYNAMIC MAX"
	if rep.Pod != "" {
		head += "\tRUNTIME\tRESULT"
	}
	fmt.Fprintln(tw, head)
	for _, e := range rep.Expressions {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s", e.Policy, e.Field, e.Length, e.Typed.String(), e.Typed.Share(rep.PerCallLimit), e.Dynamic.String())
		if r := e.Runtime; r != nil {
			res := r.Result
			if r.Error != "" {
				res = "error: " + firstLine(r.Error)
			}
			fmt.Fprintf(tw, "\t%d\t%s", r.Cost, res)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Totals) > 0 {
		fmt.Fprintln(out)
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "POLICY\tONE ADMISSION OF THE POD\tRUNTIME COST\tBUDGET\t% OF BUDGET")
		for _, t := range rep.Totals {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.4f%%\n", t.Policy, t.What, t.Cost, t.Budget, 100*float64(t.Cost)/float64(t.Budget))
		}
		return tw.Flush()
	}
	return nil
}

// String is the estimated max, "unbounded", or the first line of the error.
func (e Estimate) String() string {
	switch {
	case e.Error != "":
		return "error: " + firstLine(e.Error)
	case e.Unbounded:
		return "unbounded"
	}
	return fmt.Sprint(e.Max)
}

// Share is Max as a percentage of limit.
func (e Estimate) Share(limit int64) string {
	switch {
	case e.Error != "":
		return "-"
	case e.Unbounded:
		return "unbounded"
	}
	return fmt.Sprintf("%.4f%%", 100*float64(e.Max)/float64(limit))
}

// firstLine is the first line of s, with " ..." when more follow.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
