package podgen

import (
	"regexp"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// MarkExclusion is one way the admission policy's skip mark words the
// core's message differently, and why: the comparisons of the policy with
// the core compare the mark with the core's message as written, and count
// every difference by the exclusion that explains it.
type MarkExclusion struct {
	Name, Why string
	rewrite   func(string) string
}

// MarkExclusions are every difference between the core's message and the
// policy's mark, in the order the policy's words differ.
var MarkExclusions = []MarkExclusion{{
	Name: "mark-volume",
	Why: "the core's message names the Pod's volume as JSON; the policy's names only the template's (CEL cannot print " +
		"the Pod's as the core does)",
	rewrite: func(m string) string { return podsVolume.ReplaceAllString(m, "$1") },
}, {
	Name: "mark-record",
	Why: "the core's message for a record it cannot read ends with the JSON parser's error; CEL has no JSON parser, so " +
		"the policy says the record is not as kubectl-inject writes it",
	rewrite: func(m string) string {
		if i := strings.Index(m, ": not a valid status record"); i >= 0 {
			return m[:i] + ": not a valid status record (not as kubectl-inject writes it)"
		}
		return m
	},
}, {
	Name: "mark-truncated",
	Why:  "the policy cuts the core's message to admission.MarkMessageLimit characters and adds ...",
	rewrite: func(m string) string {
		if r := []rune(m); len(r) > admission.MarkMessageLimit {
			return string(r[:admission.MarkMessageLimit]) + "..."
		}
		return m
	},
}}

// MarkDifference returns the exclusions that turn the core's message into
// the policy's (none when they are equal); ok is false when no list of
// MarkExclusions explains the difference.
func MarkDifference(core, policy string) (exclusions []string, ok bool) {
	if core == policy {
		return nil, true
	}
	m := core
	for _, x := range MarkExclusions {
		if next := x.rewrite(m); next != m {
			exclusions, m = append(exclusions, x.Name), next
		}
	}
	return exclusions, m == policy
}

// SkipCode is the reason code the admission policy writes in the skip
// annotation of a Pod the core reports as e, or "" when it writes none:
// the skips the table of reasons marks at admission, and every failure (a
// conflict, an invalid override value or record).
func SkipCode(e inject.Entry) string {
	switch {
	case e.Action == inject.Failed:
		return string(e.Reason)
	case e.Action == inject.Skipped && slices.Contains(inject.ReasonsAtAdmission(inject.AdmissionMarked), e.Reason):
		return string(e.Reason)
	}
	return ""
}

// SkipMark is the skip annotation the admission policy writes on a Pod
// the core reports as e, given its reason code (SkipCode): the
// code, and for a refusal or a conflict ": " and the core's message in
// the policy's words (every rewrite of MarkExclusions).
func SkipMark(code string, e inject.Entry) string {
	if e.Action != inject.Failed {
		return code
	}
	msg := e.Message
	for _, x := range MarkExclusions {
		msg = x.rewrite(msg)
	}
	return code + ": " + msg
}

// podsVolume is the pod's volume in the core's message for a volume that
// differs from the template's.
var podsVolume = regexp.MustCompile(`the pod's is .*?, (the template's is )`)
