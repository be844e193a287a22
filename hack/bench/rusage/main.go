package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	sampleAnon := len(args) > 0 && args[0] == "-anon"
	if sampleAnon {
		args = args[1:]
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rusage [-anon] RESULT-FILE PROGRAM [ARG...]")
		os.Exit(2)
	}
	result := args[0]
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Start()
	var peakAnon chan int64
	exited := make(chan struct{})
	if err == nil {
		if sampleAnon {
			peakAnon = make(chan int64, 1)
			go func() { peakAnon <- samplePeakAnon(cmd.Process.Pid, exited) }()
		}
		err = cmd.Wait()
	}
	close(exited)
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(2)
	}
	var maxrss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxrss = int64(ru.Maxrss)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	code := cmd.ProcessState.ExitCode()
	var anon int64
	if peakAnon != nil {
		anon = <-peakAnon
	}
	if err := os.WriteFile(result, fmt.Appendf(nil, "%d %d %d %d %d\n", wall.Nanoseconds(), maxrss, code, cpu.Nanoseconds(), anon), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// samplePeakAnon reads the process's anonymous resident memory (RssAnon
// of /proc/PID/status: its heap, stacks and runtime, not the pages of its
// binary, which count in Maxrss) every millisecond until it is gone, and
// returns the largest value read, in kilobytes. It stops when exited is
// closed (after Wait, the pid may be another process's).
func samplePeakAnon(pid int, exited <-chan struct{}) int64 {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var peak int64
	for {
		select {
		case <-exited:
			return peak
		default:
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return peak
		}
		_, rest, found := strings.Cut(string(data), "RssAnon:")
		if !found {
			return peak // a zombie: its memory is gone
		}
		if kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64); err == nil {
			peak = max(peak, kb)
		}
		time.Sleep(time.Millisecond)
	}
}
