package urlfetch

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGet: a 200 OK answer is read whole; any other status, and an
// answer longer than MaxSize, is an error naming the URL, never a part.
func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app.yaml":
			io.WriteString(w, "kind: Pod\n")
		case "/exact":
			io.Copy(w, io.LimitReader(zeros{}, MaxSize))
		case "/long":
			io.Copy(w, io.LimitReader(zeros{}, MaxSize+1))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	if got, err := Get(srv.URL + "/app.yaml"); err != nil || string(got) != "kind: Pod\n" {
		t.Errorf("app.yaml: %q, %v", got, err)
	}
	if got, err := Get(srv.URL + "/exact"); err != nil || len(got) != MaxSize {
		t.Errorf("exactly MaxSize: %d bytes, %v", len(got), err)
	}
	for _, c := range []struct{ path, want string }{{"/none", "404 Not Found"}, {"/long", "longer than 64 MiB"}} {
		got, err := Get(srv.URL + c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), srv.URL+c.path) || got != nil {
			t.Errorf("%s: %d bytes, error %v; want none and an error naming the URL and %q", c.path, len(got), err, c.want)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
