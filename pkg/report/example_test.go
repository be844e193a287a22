package report_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/report"
)

// A file whose second document is not YAML: the error names the file's
// line and column, the reason code, and the document counted from 1.
func ExampleError() {
	const file = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: [web}
`
	in, _ := inject.New(inject.DefaultTemplate(), inject.Settings{})
	_ = manifest.ProcessDocuments(strings.NewReader(file), io.Discard, func(d manifest.Document) []byte {
		_, entries := in.ProcessText(inject.OpInject, d.Text, d.Index)
		for _, e := range entries {
			if e.Action == inject.Failed {
				fmt.Println(report.Error("app.yaml", d, e))
			} else {
				fmt.Println(report.Object(e), e.Action)
			}
		}
		return d.Text
	})
	// Output:
	// configmap/settings skipped
	// app.yaml:9:21: document 2 error: invalid_yaml: not valid YAML: did not find expected ',' or ']' (while parsing a flow sequence that began at line 9, column 17)
}
