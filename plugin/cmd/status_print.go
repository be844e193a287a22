package cmd

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// print writes the rows as a table (kubectl's layout) or as a List.
func (o *StatusOptions) print(rows []fleet.Row) error {
	switch o.Flags.Output {
	case "json", "yaml":
		list := map[string]any{"apiVersion": "kinject.dev/v1alpha1", "kind": "InjectionStatusList", "current": o.current, "items": rows}
		if len(o.skipped) > 0 {
			list["skippedAtAdmission"] = o.skipped
		}
		if rows == nil {
			list["items"] = []fleet.Row{}
		}
		data, err := json.MarshalIndent(list, "", "    ")
		if err != nil {
			return err
		}
		if o.Flags.Output == "yaml" {
			if data, err = yaml.JSONToYAML(data); err != nil {
				return err
			}
		} else {
			data = append(data, '\n')
		}
		_, err = o.Out.Write(data)
		return err
	}
	fmt.Fprintln(o.ErrOut, o.current)
	if len(rows) == 0 {
		fmt.Fprintln(o.ErrOut, "No resources found")
		return nil
	}
	w := tabwriter.NewWriter(o.Out, 0, 8, 3, ' ', 0)
	header := []string{"NAME", "STATE", "SIDECAR", "PODS", "BEHIND"}
	// Only when some Pod is terminating, as kubectl shows a column only
	// when asked: the usual table stays as it was.
	terminating := false
	for _, r := range rows {
		terminating = terminating || terminatingPods(r) > 0
	}
	if terminating {
		header = append(header, "TERMINATING")
	}
	if o.AllNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if o.Flags.Output == "wide" {
		header = append(header, "RECORDED", "CURRENT", "VALUES", "RESTART")
	}
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range rows {
		images := strings.Join(imagesOnly(r.Images), ",")
		state := r.State
		if len(r.WaitingFor) > 0 {
			state += ",waiting:" + strings.Join(r.WaitingFor, ",")
		}
		cells := []string{r.Ref(), state, orNone(images), podsCell(r), fmt.Sprint(r.PodsBehind)}
		if terminating {
			cells = append(cells, fmt.Sprint(terminatingPods(r)))
		}
		if o.AllNamespaces {
			cells = append([]string{r.Namespace}, cells...)
		}
		if o.Flags.Output == "wide" {
			cells = append(cells, orNone(r.RecordedTemplate), r.CurrentTemplate, orNone(valuesCell(r.RecordedValues)), orNone(r.Restart))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return w.Flush()
}

func podsCell(r fleet.Row) string {
	switch {
	case r.Kind == "Pod" && r.Admission:
		return "admission"
	case r.Kind == "Pod":
		return "-"
	}
	return fmt.Sprint(r.Pods)
}

func imagesOnly(images []string) []string {
	out := make([]string, len(images))
	for i, ni := range images {
		_, image, _ := strings.Cut(ni, "=")
		out[i] = image
	}
	return out
}

// valuesCell lists the recorded override values, sorted:
// "concurrency=2,cpu-request=500m".
func valuesCell(values map[string]string) string {
	keys := slices.Sorted(maps.Keys(values))
	for i, k := range keys {
		keys[i] = k + "=" + values[k]
	}
	return strings.Join(keys, ",")
}

func orNone[S ~string](s S) string {
	if s == "" {
		return "<none>"
	}
	return string(s)
}

// summary says which restarts are due, and fails --check when anything
// needs attention.
func (o *StatusOptions) summary(rows []fleet.Row) error {
	outdated, behind, failed, waiting := 0, 0, 0, 0
	quiet := o.Flags.Output == "json" || o.Flags.Output == "yaml"
	for _, line := range waitingLines(rows) {
		waiting++
		if !quiet {
			fmt.Fprintln(o.ErrOut, line)
		}
	}
	leftAlone, terminating := 0, 0
	for _, r := range rows {
		if n := terminatingPods(r); n > 0 {
			// Going, whatever it runs: neither current nor behind, and a
			// restart would not change it.
			terminating += n
			if !quiet {
				fmt.Fprintf(o.ErrOut, "%s: %s, counted neither current nor behind\n", r.Ref(), terminatingPhrase(r))
			}
		}
		if r.Terminating || (r.Kind == "Pod" && r.Admission) {
			continue // going, or counted in its workload's Pods behind
		}
		if reason := rollout.LeftAlone(r); reason != "" && !r.Failed() && r.NeedsAttention() && len(r.WaitingFor) == 0 {
			// What a restart cannot bring to the current template is named,
			// not counted: --check asks whether anything is left to do.
			leftAlone++
			if !quiet {
				fmt.Fprintf(o.ErrOut, "%s: runs an older sidecar than the template, and restart leaves it as it is (%s): %s\n", r.Ref(), reason, rollout.LeftAloneMessage(reason))
			}
			continue
		}
		if r.State == fleet.Outdated {
			outdated++
		}
		if r.Failed() {
			failed++
		}
		if r.PodsBehind > 0 {
			behind++
			if o.Flags.Output != "json" && o.Flags.Output != "yaml" {
				fmt.Fprintf(o.ErrOut, "%s: %d of %d Pods run an older sidecar than the template; restart: %s\n", r.Ref(), r.PodsBehind, r.Pods, r.Restart)
			}
		}
	}
	if !quiet {
		for _, line := range skippedLines(o.skipped) {
			fmt.Fprintln(o.ErrOut, line)
		}
	}
	if o.Check && outdated+behind+failed+waiting > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("check: %d outdated, %d with Pods behind their template, %d in error, %d waiting for a missing reference (%d left as they are and %d Pods terminating, not counted)", outdated, behind, failed, waiting, leftAlone, terminating)}
	}
	return nil
}
