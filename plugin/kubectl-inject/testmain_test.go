package main

import (
	"os"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// TestMain removes the binaries the tests built (testbin.PluginDir).
func TestMain(m *testing.M) { os.Exit(testbin.Run(m)) }
