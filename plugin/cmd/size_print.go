package cmd

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// print writes the rows as a table, or -o json|yaml.
func (o *SizeOptions) print(rows []sized) error {
	switch o.Flags.Output {
	case "json":
		return printJSON(o.Out, map[string]any{"apiVersion": "kinject.dev/v1alpha1", "kind": "SidecarSizeList", "items": rows})
	case "yaml":
		data, err := yaml.Marshal(map[string]any{"apiVersion": "kinject.dev/v1alpha1", "kind": "SidecarSizeList", "items": rows})
		if err != nil {
			return err
		}
		_, err = o.Out.Write(data)
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintln(o.ErrOut, "No injected workloads found")
		return nil
	}
	w := tabwriter.NewWriter(o.Out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "NAMESPACE\tWORKLOAD\tCONTAINER\tPODS\tSAMPLES\tCPU NOW\tCPU REC\tMEMORY NOW\tMEMORY REC\tLIMIT REC\tCHANGE (CPU, MEMORY)\tFREES (CPU, MEMORY)\tNOTE")
	var freedCPU, freedMemory float64
	for _, r := range rows {
		note := string(r.Reason)
		if r.Capped {
			note = "capped"
		}
		if r.Applied {
			note = strings.TrimPrefix(note+", applied", ", ")
		}
		rec, recMem, recLimit, change, frees := "-", "-", "-", "-", "-"
		if r.Reason == "" {
			rec, recMem, recLimit = cores(r.Recommended.CPURequest), mebibytes(r.Recommended.MemoryRequest), mebibytes(r.Recommended.MemoryLimit)
			change = percentChange(r.Now.CPURequest, r.Recommended.CPURequest) + ", " + percentChange(r.Now.MemoryRequest, r.Recommended.MemoryRequest)
			frees = cores(r.FreedCPU) + ", " + mebibytes(r.FreedMemory)
			freedCPU += r.FreedCPU
			freedMemory += r.FreedMemory
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Workload, r.Container, r.Pods, r.Samples,
			cores(r.Now.CPURequest), rec, mebibytes(r.Now.MemoryRequest), recMem, recLimit, change, frees, note)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nRecommended over %s (p%g CPU, memory peak +%g%%); across these Pods the recommendation frees %s CPU and %s of memory requested\n",
		rows[0].Window, o.Options.CPUPercentile*100, o.Options.MemoryHeadroom*100, cores(freedCPU), mebibytes(freedMemory))
	for _, r := range rows {
		if r.Message != "" {
			fmt.Fprintf(o.ErrOut, "%s/%s (%s): %s: %s\n", r.Namespace, r.Workload, r.Container, r.Reason, r.Message)
		}
	}
	return nil
}

// percentChange writes the change from now to rec in percent of now
// ("new" when nothing is requested now).
func percentChange(now, rec float64) string {
	if now == 0 {
		return "new"
	}
	return fmt.Sprintf("%+.0f%%", 100*(rec-now)/now)
}

// cores writes a CPU amount as millicores.
func cores(v float64) string {
	if v < 0 {
		return "-" + cores(-v)
	}
	return fmt.Sprintf("%dm", int64(v*1000+0.5))
}

// mebibytes writes bytes as Mi.
func mebibytes(v float64) string {
	if v < 0 {
		return "-" + mebibytes(-v)
	}
	return fmt.Sprintf("%dMi", int64(v/(1<<20)+0.5))
}
