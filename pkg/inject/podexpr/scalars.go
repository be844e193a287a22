package podexpr

import (
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// scalarValue types a scalar as YAML (and JSON) resolve it.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!int":
		// A plain decimal (a port, say) reads the same without the
		// decoder's reflection; 0x1F, 0o17, 017, 1_000 take the decoder.
		if i, ok := decimalInt(n.Value); ok {
			return i
		}
		fallthrough
	case "!!bool", "!!float":
		var v any
		if err := n.Decode(&v); err == nil {
			if i, ok := v.(int); ok {
				return int64(i)
			}
			return v
		}
	}
	return n.Value
}

// decimalInt reads s when it is a plain decimal int (ascii.IsDecimalInt).
func decimalInt(s string) (int64, bool) {
	if !ascii.IsDecimalInt(s) {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}
