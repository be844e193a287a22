package config

import (
	"io"
	"os"

	"golang.org/x/term"
)

// ColorFor reports whether --diff output to w is colored: always, never,
// or (auto) when w is a terminal, as kubectl and git decide.
func (f *Flags) ColorFor(w io.Writer) bool {
	switch f.Color {
	case "always":
		return true
	case "never":
		return false
	}
	file, ok := w.(*os.File)
	return ok && term.IsTerminal(int(file.Fd())) && os.Getenv("NO_COLOR") == ""
}
