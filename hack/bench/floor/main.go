package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	yaml "go.yaml.in/yaml/v3"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run() error {
	var r io.Reader = os.Stdin
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	dec := yaml.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		enc := yaml.NewEncoder(w)
		if err := enc.Encode(&n); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
	}
	return w.Flush()
}
