package inject

import "testing"

// TestExpressionsShared: templates carrying the same expression text share
// one expression, prepared once.
func TestExpressionsShared(t *testing.T) {
	a, b := DefaultTemplate(), DefaultTemplate()
	if a.Parameters[0].expr == nil || a.Parameters[0].expr != b.Parameters[0].expr {
		t.Error("two parses of the default hold two expressions")
	}
}
