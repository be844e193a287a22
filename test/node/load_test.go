package node_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// load sends GET requests to a URL at a fixed rate from the test
// process, over kept-alive connections (the proxy's work is then the
// requests, not the connections), and counts them.
type load struct {
	sent, failed atomic.Int64
	began        time.Time
	stop         chan struct{}
	done         sync.WaitGroup
}

// loadWorkers share a load's rate: one slow answer delays one worker.
const loadWorkers = 8

// startLoad sends rate requests a second to url until finish.
func startLoad(url string, rate int) *load {
	l := &load{stop: make(chan struct{}), began: time.Now()}
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: loadWorkers},
	}
	each := time.Duration(loadWorkers) * time.Second / time.Duration(rate)
	for range loadWorkers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			tick := time.NewTicker(each)
			defer tick.Stop()
			for {
				select {
				case <-l.stop:
					return
				case <-tick.C:
				}
				l.sent.Add(1)
				resp, err := client.Get(url)
				if err != nil {
					l.failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					l.failed.Add(1)
				}
			}
		}()
	}
	return l
}

// finish stops sending and returns the rate achieved (requests a
// second) and the requests that failed.
func (l *load) finish() (rate float64, failed int64) {
	close(l.stop)
	l.done.Wait()
	return float64(l.sent.Load()) / time.Since(l.began).Seconds(), l.failed.Load()
}

// cgroupSampler reads a container's cgroup every 500 ms, so that the
// CPU it used over any window a source reports on can be worked out
// from the kernel's own counter.
type cgroupSampler struct {
	mu      sync.Mutex
	samples []node.CgroupSample
	err     error
	stop    chan struct{}
	done    sync.WaitGroup
}

func startCgroupSampler(t *testing.T, pod *corev1.Pod, container string) *cgroupSampler {
	t.Helper()
	first, err := node.ReadContainerCgroup(pod, container)
	if err != nil {
		t.Fatal(err)
	}
	s := &cgroupSampler{samples: []node.CgroupSample{first}, stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			got, err := node.ReadContainerCgroup(pod, container)
			s.mu.Lock()
			if err != nil && s.err == nil {
				s.err = err
			}
			if err == nil {
				s.samples = append(s.samples, got)
			}
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		close(s.stop)
		s.done.Wait()
	})
	return s
}

// cpuAt is the container's cumulative CPU at at, interpolated between
// the samples around it; for a moment just past, it waits for the next
// sample.
func (s *cgroupSampler) cpuAt(at time.Time) (time.Duration, error) {
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		cpu, found, err := s.interpolate(at)
		if err != nil || found {
			return cpu, err
		}
		if time.Now().After(deadline) || time.Until(at) > 0 {
			return 0, fmt.Errorf("no cgroup samples around %s", at.Format(time.RFC3339Nano))
		}
	}
}

func (s *cgroupSampler) interpolate(at time.Time) (time.Duration, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, false, s.err
	}
	for i := 1; i < len(s.samples); i++ {
		a, b := s.samples[i-1], s.samples[i]
		if !at.Before(a.Time) && !at.After(b.Time) {
			f := float64(at.Sub(a.Time)) / float64(b.Time.Sub(a.Time))
			return a.CPU + time.Duration(f*float64(b.CPU-a.CPU)), true, nil
		}
	}
	return 0, false, nil
}

// cpuBetween is the average CPU in cores the container used from a to b.
func (s *cgroupSampler) cpuBetween(a, b time.Time) (float64, error) {
	ca, err := s.cpuAt(a)
	if err != nil {
		return 0, err
	}
	cb, err := s.cpuAt(b)
	if err != nil {
		return 0, err
	}
	return float64(cb-ca) / float64(b.Sub(a)), nil
}

// last is the latest sample.
func (s *cgroupSampler) last() node.CgroupSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples[len(s.samples)-1]
}
