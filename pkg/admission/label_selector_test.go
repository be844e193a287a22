package admission

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// apiServerSelector is objectSelector written with the API server's own
// parser: the reference TestObjectSelectorAsAPIServer holds it to.
func apiServerSelector(s string) (*labelSelector, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, err
	}
	reqs, _ := sel.Requirements()
	out := &labelSelector{}
	for _, r := range reqs {
		term := selectorTerm{Key: r.Key(), Values: r.Values().List()}
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			term.Operator = "In"
		case selection.NotEquals, selection.NotIn:
			term.Operator = "NotIn"
		case selection.Exists:
			term.Operator, term.Values = "Exists", nil
		case selection.DoesNotExist:
			term.Operator, term.Values = "DoesNotExist", nil
		default:
			return nil, nil // gt and lt: objectSelector refuses them
		}
		out.MatchExpressions = append(out.MatchExpressions, term)
	}
	return out, nil
}

// selectorCorpus holds each form of the grammar, its corners (empty
// values, the words in and notin as keys and values, repeated keys, odd
// spacing, NUL bytes) and its errors.
var selectorCorpus = []string{
	"", " ", "app", "!app", "app=web", "app==web", "app!=web", "app=", "app!=", "a=b,c=d",
	"app in (web,api)", "app notin (web, api)", "app in ()", "app in (,)", "app in (a,)", "app in (,a)",
	"app in (a,,b)", "app in (b,a,b)", "in", "in in (in,notin)", "notin notin (x)", "a=in", "x=notin",
	"b=1,a=2,b!=3,a in (x)", "b,a,!c,a=1", "example.com/tier=web, !example.com/canary",
	"  app = web ,tier in ( a , b )  ", "app\t=\tweb", "a=b\x00garbage(", "a\x00=b", "a=\x00b", "!\x00a",
	"replicas>3", "replicas<3", "a>1,b=2",
	// errors
	"a,", ",a", "a,,b", "!a=b", "a=(", "a in", "a in (", "a in (b", "a in (b c)", "a in b", "a b", "=a",
	"a==b==c", "a=b c", "a!!=b", "a in ((b))", "a in (b)(c)", "(", ")", "!", "!!a", "a<=3", "a=!b",
	"a/b/c=d", "-a=b", "a=-b", "a=" + strings.Repeat("v", 64), strings.Repeat("k", 64),
}

// selectorCase builds a random selector from the grammar's pieces.
func selectorCase(r *rand.Rand) string {
	pieces := []string{"a", "b", "app", "example.com/x", "in", "notin", "v1", "-", "",
		"=", "==", "!=", "!", "<", ">", "(", ")", ",", " ", "\t", "\x00", "9", "a.b", "_x"}
	var b strings.Builder
	for n := r.IntN(12); n >= 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestObjectSelectorAsAPIServer: objectSelector, which reads selectors
// without apimachinery's parser, gives the API server's requirements for
// every selector the settings accept (the same terms in the same order),
// and never turns one that the API server refuses into a binding.
func TestObjectSelectorAsAPIServer(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 44))
	cases := append([]string(nil), selectorCorpus...)
	for range 50000 {
		cases = append(cases, selectorCase(r))
	}
	// compared and refused count the selectors objectSelector reads as
	// the API server does; wantCompared and wantRefused the selectors the
	// references (the API server's parser, the settings' validation) put
	// on each side, so that a case left out of the comparison shows.
	compared, refused, wantCompared, wantRefused := 0, 0, 0, 0
	for _, s := range cases {
		switch checkSelectorAsAPIServer(t, s) {
		case selectorComparedAlike:
			wantCompared++
			compared++
		case selectorComparedApart:
			wantCompared++
		case selectorRefusedAlike:
			wantRefused++
			refused++
		case selectorRefusedApart:
			wantRefused++
		}
	}
	t.Logf("%d selectors read alike, %d refused by the API server", compared, refused)
	if compared != wantCompared || refused != wantRefused {
		t.Errorf("%d selectors read alike and %d refused, want %d and %d", compared, refused, wantCompared, wantRefused)
	}
	// The generator must reach both sides, or the test compares little.
	if wantCompared < len(cases)/10 || wantRefused < len(cases)/10 {
		t.Errorf("the API server reads %d and refuses %d of %d selectors: the generator misses a side", wantCompared, wantRefused, len(cases))
	}
}

// How checkSelectorAsAPIServer found a selector: read by the API server
// (compared) or refused by it, alike or apart; outside the comparison
// when the settings refuse what the API server reads, or it has no
// equivalent in a binding.
type selectorOutcome int

const (
	selectorOutside selectorOutcome = iota
	selectorComparedAlike
	selectorComparedApart
	selectorRefusedAlike
	selectorRefusedApart
)

// checkSelectorAsAPIServer compares objectSelector with the API server's
// parser on s, failing t where they differ.
func checkSelectorAsAPIServer(t *testing.T, s string) selectorOutcome {
	t.Helper()
	want, wantErr := apiServerSelector(s)
	accepted := inject.Settings{Policy: inject.Policy{Selector: s}}.Validate() == nil
	got, err := objectSelector(s)
	switch {
	case wantErr != nil:
		if accepted && err == nil {
			t.Errorf("%q: the API server refuses it (%v), but the settings accept it and objectSelector gives %+v", s, wantErr, got)
			return selectorRefusedApart
		}
		return selectorRefusedAlike
	case !accepted:
		// kyaml's copy of the parser, which the settings use, and the
		// API server's disagree: nothing reaches objectSelector.
		return selectorOutside
	case want == nil:
		if err == nil || !strings.Contains(err.Error(), "has no equivalent") {
			t.Errorf("%q: got %+v, %v; want gt and lt refused", s, got, err)
		}
		return selectorOutside
	case err != nil:
		t.Errorf("%q: %v; the API server reads %+v", s, err, want)
		return selectorComparedApart
	case !reflect.DeepEqual(got, want):
		t.Errorf("%q: got %+v, the API server reads %+v", s, got, want)
		return selectorComparedApart
	}
	return selectorComparedAlike
}

// FuzzObjectSelectorAsAPIServer: for any selector, objectSelector (the
// parser kept so that inject-fn starts without apimachinery's) reads it
// as the API server's parser does, or both refuse it.
func FuzzObjectSelectorAsAPIServer(f *testing.F) {
	for _, s := range selectorCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkSelectorAsAPIServer(t, s) })
}
