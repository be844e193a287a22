package envoycheck

import (
	"strings"
	"testing"
)

// TestBootstrapMapOfAnys: in a map of Anys the walk goes on past the
// valid entries until one fails, whichever order the map is walked in,
// and an invalid entry's error is not lost to a valid one walked after it.
func TestBootstrapMapOfAnys(t *testing.T) {
	t.Parallel()
	const router = "        \"@type\": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\n"
	config := strings.Replace(baseBootstrap, "  - name: admin\n", "  - name: admin\n    typed_extension_protocol_options:\n"+
		"      a-valid:\n"+router+
		"      b-invalid:\n"+router+"        strict_check_headers: [x-nope]\n"+
		"      c-valid:\n"+router, 1)
	if config == baseBootstrap {
		t.Fatal("the base bootstrap has no cluster admin")
	}
	want := "bootstrap.static_resources.clusters[1].typed_extension_protocol_options[b-invalid](envoy.extensions.filters.http.router.v3.Router): invalid Router.StrictCheckHeaders[0]"
	for range 5 { // the map is walked in a new order each time
		_, err := Bootstrap([]byte(config), map[uint32]bool{8080: true})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error = %v\nwant it to contain %q", err, want)
		}
	}
}
