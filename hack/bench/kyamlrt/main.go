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
