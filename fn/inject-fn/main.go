package main

import (
	"os"

	"github.com/kinject/kubectl-inject/fn/processor"
)

func main() {
	os.Exit(processor.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
