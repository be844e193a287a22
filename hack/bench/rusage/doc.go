// Command rusage runs a program and reports its wall time and peak RSS, for
// hack/bench.
//
//	rusage [-anon] RESULT-FILE PROGRAM [ARG...]
//
// Standard input, output and error are passed through. RESULT-FILE gets one
// line: "WALL-NANOSECONDS MAXRSS-KILOBYTES EXIT-CODE CPU-NANOSECONDS
// ANON-KILOBYTES". With -anon, ANON-KILOBYTES is the peak of the program's
// anonymous memory (RssAnon, sampled every millisecond): Maxrss also counts
// the pages of its binary, which the kernel maps in whole runs around each
// page touched, so a larger binary has a larger Maxrss for the same heap.
// Without -anon it is 0: sampling takes a little CPU (a read of /proc
// every millisecond), which start-up figures would feel. It can miss a
// peak shorter than that, and it competes with a program that uses every
// core; hack/bench samples only in part 1, and part 10, which does not,
// measures the same programs' time.
//
// Why a launcher: Linux keeps a process's peak RSS across execve, and Go's
// os/exec starts children with vfork (sharing the parent's memory until the
// exec), so a child of a large process (the benchmark harness, after
// generating inputs and profiling) reports the parent's peak RSS as its own.
// This program is small, so the peak RSS of its child is the child's.
package main
