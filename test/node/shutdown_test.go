package node_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// termDelay is how long the app keeps serving after SIGTERM.
const termDelay = 4 * time.Second

// observation is one request of the watcher.
type observation struct {
	at time.Time
	// app is the app's state through the proxy ("serving",
	// "terminating"), or "" when the request failed; ready says whether
	// the proxy's /ready answered 200.
	app   string
	ready bool
}

// TestShutdown deletes an injected Pod, each way, while a client keeps
// asking through the proxy: the app gets SIGTERM first (it answers
// "terminating" through the proxy during its grace period), and the
// proxy still answers /ready after the app has stopped answering.
func TestShutdown(t *testing.T) {
	n.Require(t)
	eachWay(t, nil, func(t *testing.T, w way, ns string) {
		mustSucceed(t, w.deploy(t, ns, webDeployment("", "-term-delay", termDelay.String())), "inject")
		kubectl(t, "", "rollout", "status", "-n", ns, "deploy/web", "--timeout=2m")
		pod := readyPod(t, ns, "app=web")

		var (
			mu   sync.Mutex
			seen []observation
		)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ctx.Err() == nil {
				o := observation{at: time.Now()}
				if answer, err := get("http://" + pod.Status.PodIP + ":10000/"); err == nil {
					o.app = strings.TrimSpace(answer[strings.Index(answer, "state=")+len("state="):])
				}
				_, err := get("http://" + pod.Status.PodIP + ":9902/ready")
				o.ready = err == nil
				mu.Lock()
				seen = append(seen, o)
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		}()
		time.Sleep(500 * time.Millisecond)
		deleted := time.Now()
		if err := admin(t).CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the Pod to be gone", func() bool {
			_, err := admin(t).CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
			return err != nil
		})
		cancel()
		<-done

		var terminating, appGone, readyAfterApp time.Time
		for _, o := range seen {
			switch {
			case o.app == "terminating" && terminating.IsZero():
				terminating = o.at
			case o.app == "" && !terminating.IsZero() && appGone.IsZero():
				appGone = o.at
			case o.ready && !appGone.IsZero():
				readyAfterApp = o.at
			}
		}
		t.Logf("deleted at 0s; the app answered terminating from %s, stopped answering at %s; the proxy was ready until %s",
			since(deleted, terminating), since(deleted, appGone), since(deleted, readyAfterApp))
		switch {
		case terminating.IsZero():
			t.Errorf("no answer from the terminating app through the proxy: the proxy stopped first, or the app got no SIGTERM")
		case appGone.IsZero():
			t.Errorf("the app never stopped answering through the proxy")
		case readyAfterApp.IsZero():
			t.Errorf("the proxy did not answer /ready once the app had stopped: it did not outlive the app")
		}
		if !terminating.IsZero() && terminating.Sub(deleted) > termDelay {
			t.Errorf("the app answered terminating only %s after the deletion", terminating.Sub(deleted))
		}
	})
}

func since(from, to time.Time) string {
	if to.IsZero() {
		return "never"
	}
	return to.Sub(from).Round(100 * time.Millisecond).String()
}
