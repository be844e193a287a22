// Command kyamlrt is a reference for hack/bench, not the floor: a kyaml
// whole-stream round trip that changes nothing.
//
//	kyamlrt [FILE]       kio.ByteReader -> kio.ByteWriter over a multi-document stream
//	kyamlrt -rl < RL     kio.ByteReadWriter (KeepReaderAnnotations) over a ResourceList,
//	                     as a kyaml fn/framework function reads and writes it
//	kyamlrt -noop        exits at once: the start-up cost of linking kyaml alone
//
// Both read the whole stream into memory, and kio.ByteWriter encodes every
// document with one shared yaml.v3 Encoder, which keeps its events until it is
// closed (go-yaml/yaml#873): time and memory grow much faster than the floor's
// (hack/bench/floor). The -rl form is what any kyaml-based KRM function pays,
// so inject-fn is compared to it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

func main() {
	rl := flag.Bool("rl", false, "round-trip a ResourceList (kio.ByteReadWriter) instead of a plain stream")
	noop := flag.Bool("noop", false, "exit at once (start-up cost of a program that links kyaml)")
	flag.Parse()
	if *noop {
		return
	}
	if err := run(*rl, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "kyamlrt:", err)
		os.Exit(1)
	}
}

func run(rl bool, args []string) error {
	var r io.Reader = os.Stdin
	if len(args) > 0 {
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	if rl {
		rw := &kio.ByteReadWriter{Reader: r, Writer: w, KeepReaderAnnotations: true}
		nodes, err := rw.Read()
		if err != nil {
			return err
		}
		if err := rw.Write(nodes); err != nil {
			return err
		}
	} else {
		nodes, err := (&kio.ByteReader{Reader: r}).Read()
		if err != nil {
			return err
		}
		if err := (kio.ByteWriter{Writer: w}).Write(nodes); err != nil {
			return err
		}
	}
	return w.Flush()
}
