package gen

import (
	"bytes"
	"fmt"
	"io"
)

// Write writes n Deployments, each followed by its Service and ConfigMap,
// as one multi-document stream.
func Write(w io.Writer, n int) error {
	for i := 0; i < n; i++ {
		if _, err := fmt.Fprintf(w, appTemplate, i); err != nil {
			return err
		}
	}
	return nil
}

// appTemplate is one app: %[1]d is its number.
const appTemplate = `---
# app-%[1]d: web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%[1]d
  namespace: bench
  labels:
    app: app-%[1]d
    tier: web # serves traffic
spec:
  replicas: 2
  selector:
    matchLabels:
      app: app-%[1]d
  template:
    metadata:
      labels:
        app: app-%[1]d
        tier: web
    spec:
      containers:
      - name: web
        image: "nginx:1.27"
        ports:
        - containerPort: 8080
          name: http
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
          periodSeconds: 5
        livenessProbe:
          tcpSocket:
            port: 8080
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            memory: 256Mi
        volumeMounts:
        - name: config
          mountPath: /etc/app
      - name: log-shipper
        image: fluent/fluent-bit:3.1
        args: ["--config", "/etc/app/fluent-bit.conf"]
        volumeMounts:
        - name: config
          mountPath: /etc/app
      volumes:
      - name: config
        configMap:
          name: app-%[1]d-config
---
apiVersion: v1
kind: Service
metadata:
  name: app-%[1]d
  namespace: bench
spec:
  selector:
    app: app-%[1]d
  ports:
  - port: 80
    targetPort: http
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-%[1]d-config
  namespace: bench
data:
  fluent-bit.conf: |
    [INPUT]
        Name tail
        Path /var/log/app/*.log
  app.properties: |
    greeting=hello
    workers=4
`

// podTemplateLabelsEnd is where the pod template's labels of appTemplate
// end: override annotations go right after them.
const podTemplateLabelsEnd = "        tier: web\n    spec:\n"

// WithOverrides adds the override annotations of the embedded default
// template to every Deployment's pod template in src (a stream Write
// wrote): a CPU request and a memory limit, the same everywhere, or, when
// distinct, a CPU request of its own per Deployment.
func WithOverrides(src []byte, distinct bool) []byte {
	end := []byte(podTemplateLabelsEnd)
	var out bytes.Buffer
	for i := 0; ; i++ {
		j := bytes.Index(src, end)
		if j < 0 {
			out.Write(src)
			return out.Bytes()
		}
		cpu := "250m"
		if distinct {
			cpu = fmt.Sprintf("%dm", 100+i%5000)
		}
		out.Write(src[:j])
		fmt.Fprintf(&out, "        tier: web\n      annotations:\n        sidecar.kinject.dev/cpu-request: %s\n        sidecar.kinject.dev/memory-limit: 1Gi\n    spec:\n", cpu)
		src = src[j+len(end):]
	}
}
