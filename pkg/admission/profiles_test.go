package admission

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// The policy reads other profiles' records with regular expressions that
// the API server's CEL runs with RE2, as Go's regexp does: these tests hold
// them to what record.Status.Encode writes and what the core reads.

func TestStatusKeyPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(statusKeyPattern)
	for _, key := range []string{
		"sidecar.kinject.dev/status", "mesh.sidecar.kinject.dev/status", "a.sidecar.kinject.dev/status",
		"x-1.sidecar.kinject.dev/status", "-x.sidecar.kinject.dev/status", "x-.sidecar.kinject.dev/status",
		"a.b.sidecar.kinject.dev/status", "Mesh.sidecar.kinject.dev/status", ".sidecar.kinject.dev/status",
		"mesh.sidecar.kinject.dev/inject", "sidecar.kinject.dev/statuses", "xsidecar.kinject.dev/status",
		"a23456789012345678901234567890123456789012345678901234567890123.sidecar.kinject.dev/status",
		"a234567890123456789012345678901234567890123456789012345678901234.sidecar.kinject.dev/status",
	} {
		_, want := naming.ProfileOfStatusKey(key)
		if got := re.MatchString(key); got != want {
			t.Errorf("%s: the policy reads it as a record key: %v, the core: %v", key, got, want)
		}
	}
}

// records are status records as the core writes them, from the smallest to
// one with every field and values that need escaping.
func records() map[string]*record.Status {
	return map[string]*record.Status{
		"minimal": {Version: 1, Template: "abc"},
		"full": {
			Version: 1, Template: "0123456789abcdef",
			Containers: []string{"envoy", "log-agent"}, InitContainers: []string{"tagger"}, Volumes: []string{"envoy-conf"},
			Labels: []string{"mesh"}, Annotations: []string{naming.DefaultContainerAnnotation, "prometheus.io/scrape"},
			Changed: &record.Changed{
				Labels:      map[string]string{"tier": `a "quoted" \ value`},
				Annotations: map[string]string{"note": "line\nbreak, \"containers\":[\"envoy\"]", "x": ""},
			},
			Created: []string{"initContainers", "metadata.annotations"}, Null: []string{"volumes"},
			NullTokens: map[string]string{"volumes": "~"},
			Empty:      map[string]string{"spec": "\n  ", "metadata.labels": "\n\t\r\n    "},
			Values:     map[string]string{"cpu-request": "250m", "example.com/s": `{"v":1}`},
		},
		"changed annotations only": {Version: 1, Template: "h", Changed: &record.Changed{Annotations: map[string]string{"a": "b"}}},
	}
}

// TestFullRecordIsFull fails when record.Status gains a field that the
// full record leaves unset: the record pattern is generated from the type,
// and this record is what shows that the policy reads the new field.
func TestFullRecordIsFull(t *testing.T) {
	t.Parallel()
	v := reflect.ValueOf(*records()["full"])
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Errorf("the full record leaves Status.%s unset: set it, so TestRecordPattern reads it", v.Type().Field(i).Name)
		}
	}
	if _, err := record.Parse(naming.StatusAnnotation, records()["full"].Encode()); err != nil {
		t.Errorf("the core does not read the full record: %v", err)
	}
}

func TestRecordPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(recordPattern())
	for name, s := range records() {
		if enc := s.Encode(); !re.MatchString(enc) {
			t.Errorf("%s: the policy does not read the record %s", name, enc)
		}
	}
	for _, bad := range []string{
		`{"v":2,"template":"abc"}`, `{"v":1,"template":""}`, `{"v":1, "template":"abc"}`,
		`{"v":1,"template":"abc","created":["spec"]}`, `{"v":1,"template":"abc","extra":1}`, `not json`,
	} {
		if re.MatchString(bad) {
			t.Errorf("the policy reads %s as a record", bad)
		}
	}
}

func TestOwnerPatterns(t *testing.T) {
	t.Parallel()
	full := records()["full"].Encode()
	for _, tc := range []struct {
		name, re string
		want     bool
	}{
		{"container listed", listedPattern([]string{"containers", "initContainers"}, "log-agent"), true},
		{"native sidecar listed", listedPattern([]string{"containers", "initContainers"}, "tagger"), true},
		{"volume listed", listedPattern([]string{"volumes"}, "envoy-conf"), true},
		{"container is not a volume", listedPattern([]string{"volumes"}, "envoy"), false},
		{"label added", keyOwnedPattern(inject.ConflictLabel, "mesh"), true},
		{"label changed", keyOwnedPattern(inject.ConflictLabel, "tier"), true},
		{"annotation added", keyOwnedPattern(inject.ConflictAnnotation, naming.DefaultContainerAnnotation), true},
		{"annotation changed", keyOwnedPattern(inject.ConflictAnnotation, "x"), true},
		{"an annotation key is not a label", keyOwnedPattern(inject.ConflictLabel, "note"), false},
		{"a label key is not an annotation", keyOwnedPattern(inject.ConflictAnnotation, "tier"), false},
	} {
		if got := regexp.MustCompile(tc.re).MatchString(full); got != tc.want {
			t.Errorf("%s: %v, want %v (%s)", tc.name, got, tc.want, full)
		}
	}
	// JSON escapes every quote inside a string: a value that reads like a
	// list is not one.
	decoy := (&record.Status{Version: 1, Template: "h", Containers: []string{"app-proxy"},
		Changed: &record.Changed{Annotations: map[string]string{"note": `x,"containers":["envoy"],"labels":["mesh"]`}}}).Encode()
	for _, re := range []string{listedPattern([]string{"containers", "initContainers"}, "envoy"), keyOwnedPattern(inject.ConflictLabel, "mesh")} {
		if regexp.MustCompile(re).MatchString(decoy) {
			t.Errorf("%s matches %s", re, decoy)
		}
	}
}

func TestParameterPlaces(t *testing.T) {
	t.Parallel()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Profile: "mesh"})
	if err != nil {
		t.Fatal(err)
	}
	c := &compiler{in: in, profile: "mesh"}
	if err := c.loadItems(in.Template()); err != nil {
		t.Fatal(err)
	}
	if err := c.loadParams(in.Template().Parameters); err != nil {
		t.Fatal(err)
	}
	envoy := c.items[0].value.(map[string]any)
	args := envoy["args"].([]any)
	if h, ok := args[1].(hole); !ok || h.p.key != "mesh.sidecar.kinject.dev/concurrency" || h.orig != "4" {
		t.Errorf("concurrency: the word after --concurrency is %#v", args[1])
	}
	if h, ok := envoy["image"].(hole); !ok || h.p.Annotation != "image" {
		t.Errorf("image: %#v", envoy["image"])
	}
	requests := envoy["resources"].(map[string]any)["requests"].(map[string]any)
	if _, ok := requests["cpu"].(hole); !ok {
		t.Errorf("cpu request: %#v", requests["cpu"])
	}
	if len(c.params) != 7 || c.params[0].computed == nil {
		t.Errorf("%d parameters, want the embedded default's 7, app-port with an expression first", len(c.params))
	}
}

func TestFlagWord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		words  []any
		index  int
		prefix string
	}{
		{[]any{"--concurrency", "4"}, 1, ""},
		{[]any{"--mode", "serve", "--concurrency=4"}, 2, "--concurrency="},
		{[]any{"--concurrency"}, -1, ""},
		{[]any{"--concurrencyx", "4"}, -1, ""},
		{[]any{"--concurrency", 4}, 1, ""},
	} {
		i, p := flagWord(tc.words, "--concurrency")
		if i != tc.index || p != tc.prefix {
			t.Errorf("%v: %d %q, want %d %q", tc.words, i, p, tc.index, tc.prefix)
		}
	}
}
