package processor_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kinject/kubectl-inject/fn/processor"
)

// FuzzResourceList runs the function on any input, as kpt or kustomize may
// send it: it must never panic, and whatever it writes must read back as
// a ResourceList with at least the items that came in (a policy adds
// some; nothing is dropped). An input it refuses gets no output at all.
func FuzzResourceList(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/*")
	for _, dir := range dirs {
		if rl, err := composeInput(dir); err == nil {
			f.Add(rl)
		}
	}
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: [a]\n"))
	f.Add([]byte("kind: ResourceList\nitems: [{kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: b}]}}]\nfunctionConfig: {kind: SidecarInjection, apiVersion: kinject.dev/v1alpha1, metadata: {name: s}, spec: {templateRef: {name: cm}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		err := processor.Run(processor.Processor{}, bytes.NewReader(data), &out)
		if out.Len() == 0 {
			if err == nil {
				t.Fatalf("no output and no error for:\n%s", data)
			}
			return
		}
		in := (&kio.ByteReadWriter{Reader: bytes.NewReader(data), KeepReaderAnnotations: true})
		inItems, inErr := in.Read()
		if inErr != nil {
			t.Fatalf("the function wrote output for an input kyaml cannot read (%v):\n%s", inErr, data)
		}
		back := &kio.ByteReadWriter{Reader: bytes.NewReader(out.Bytes()), KeepReaderAnnotations: true}
		outItems, readErr := back.Read()
		if readErr != nil {
			t.Fatalf("the output does not read back (%v)\ninput:\n%s\noutput:\n%s", readErr, data, out.Bytes())
		}
		if back.WrappingKind != processor.ResourceListKind {
			t.Fatalf("the output is a %q, not a ResourceList:\n%s", back.WrappingKind, out.Bytes())
		}
		if len(outItems) < len(inItems) {
			t.Fatalf("%d items in, %d out\ninput:\n%s\noutput:\n%s", len(inItems), len(outItems), data, out.Bytes())
		}
	})
}
