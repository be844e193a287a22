package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// The zero-work webhook is the floor of every webhook injector: a TLS
// server on loopback that answers each AdmissionReview with one constant
// JSON patch adding what the compiled policy adds to the bench Pod. It
// reads the review only for its uid; what a real injector does beside
// (decode the Pod, decide, render the sidecar) comes on top.
const webhookName = "kinject-bench-webhook"

// sideWebhook is the bench side served by the zero-work webhook.
const sideWebhook = "webhook"

type zeroWorkWebhook struct {
	srv   *http.Server
	url   string
	caPEM []byte
	patch []byte // the JSON patch, base64 in the response
}

// startWebhook serves the zero-work webhook for the bench Pod injected as
// preInjected on a loopback port.
func startWebhook(preInjected *corev1.Pod) (*zeroWorkWebhook, error) {
	patch, err := injectionPatchJSON(preInjected)
	if err != nil {
		return nil, err
	}
	cert, caPEM, err := loopbackCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &zeroWorkWebhook{url: "https://" + ln.Addr().String() + "/mutate", caPEM: caPEM, patch: patch}
	w.srv = &http.Server{Handler: http.HandlerFunc(w.serve), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.srv.ServeTLS(ln, "", "") }()
	return w, nil
}

// serve answers a review: its uid, allowed, the constant patch.
func (w *zeroWorkWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	var review struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	if err := json.NewDecoder(bufio.NewReader(r.Body)).Decode(&review); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"response": map[string]any{"uid": review.Request.UID, "allowed": true, "patchType": "JSONPatch", "patch": w.patch},
	})
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(out)
}

// Stop ends the server.
func (w *zeroWorkWebhook) Stop() { _ = w.srv.Close() }

// objects is the MutatingWebhookConfiguration that sends every Pod
// creation to the webhook.
func (w *zeroWorkWebhook) objects() ([][]byte, error) {
	none, fail := "None", "Fail"
	cfg := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "MutatingWebhookConfiguration",
		"metadata":   map[string]any{"name": webhookName},
		"webhooks": []any{map[string]any{
			"name":                    "zero-work.bench.kinject.dev",
			"clientConfig":            map[string]any{"url": w.url, "caBundle": w.caPEM},
			"rules":                   []any{map[string]any{"apiGroups": []string{""}, "apiVersions": []string{"v1"}, "operations": []string{"CREATE"}, "resources": []string{"pods"}}},
			"admissionReviewVersions": []string{"v1"},
			"sideEffects":             none,
			"failurePolicy":           fail,
			"reinvocationPolicy":      "Never",
			"timeoutSeconds":          10,
		}},
	}
	data, err := json.Marshal(cfg)
	return [][]byte{data}, err
}

// loopbackCert is a self-signed certificate for 127.0.0.1, its own CA.
func loopbackCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: webhookName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return cert, certPEM, err
}

// cpuSeconds is the API server's process_cpu_seconds_total in a metrics
// text, -1 when it has none.
func cpuSeconds(text string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return f
			}
		}
	}
	return -1
}

// mustMetrics is the API server's metrics text, "" when it cannot be read.
func mustMetrics(ctx context.Context, cs kubernetes.Interface) string {
	text, _ := metricsText(ctx, cs)
	return text
}
