# kubectl-inject: build, try, test and release.
#
#   make demo    build, then inject the embedded Envoy sidecar into an example app
#   make test    install the test tools (pinned), build the test API server, run every test
#
MODULE  := github.com/kinject/kubectl-inject
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X $(MODULE)/pkg/version.Version=$(VERSION) -X $(MODULE)/pkg/version.Commit=$(COMMIT)
IMAGE   ?= kinject/inject-fn:$(VERSION)
BIN     := bin
DIST    := dist
KINJECT_CACHE ?= $(HOME)/.cache/kubectl-inject
TOOLS_BIN := $(KINJECT_CACHE)/bin
GOTEST_FLAGS ?= -timeout 45m

export CGO_ENABLED := 0
export KINJECT_CACHE

.PHONY: all build demo test unit e2e live tools bench fuzz image dist krew clean
all: build

## build: the binaries into bin/ (kubectl-inject hands all but --local to kubectl-inject-live beside it)
build:
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-inject ./plugin
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-inject-live ./plugin/kubectl-inject-live
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/inject-fn ./fn

## demo: inject the embedded Envoy sidecar into examples/cli/app.yaml and show the result
demo: build
	@echo '$$ kubectl inject --local -f examples/cli/app.yaml'
	@$(BIN)/kubectl-inject --local -f examples/cli/app.yaml
	@echo
	@echo '$$ kubectl inject --local -f examples/cli/app.yaml | diff examples/cli/app.yaml -   # only added lines'
	@$(BIN)/kubectl-inject --local -f examples/cli/app.yaml 2>/dev/null | diff examples/cli/app.yaml - || true

## tools: install the pinned test tools and build the test kube-apiserver (cached)
tools:
	hack/install-tools.sh
	hack/build-apiserver.sh

## test: every test: core, plugin, function, e2e (kustomize, kpt, Docker, krew), live and admission (kube-apiserver + etcd), then every fuzz target for 20 s
test: tools
	PATH="$(TOOLS_BIN):$$PATH" go test $(GOTEST_FLAGS) ./...
	$(MAKE) fuzz FUZZTIME=20s

## unit: the fast tests only (no external tools)
unit:
	go test -short ./...

## e2e / live: one part of the suite
e2e: tools
	PATH="$(TOOLS_BIN):$$PATH" go test $(GOTEST_FLAGS) ./test/e2e/... ./test/krew/...
live: tools
	PATH="$(TOOLS_BIN):$$PATH" go test $(GOTEST_FLAGS) ./test/live/... ./test/cluster/... ./test/admission/...

## fuzz: run each fuzz target for FUZZTIME (default 60s)
FUZZTIME ?= 60s
fuzz:
	go test ./pkg/inject -run '^$$' -fuzz '^FuzzInject$$' -fuzztime $(FUZZTIME)
	go test ./pkg/inject -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME)
	go test ./pkg/inject -run '^$$' -fuzz '^FuzzParseStatus$$' -fuzztime $(FUZZTIME)

## bench: benchmarks as ratios measured in one run; writes docs/benchmarks.md
bench: tools build
	go test ./pkg/inject -run '^$$' -bench . -benchmem -count 1
	PATH="$(TOOLS_BIN):$$PATH" go run ./hack/bench -out docs/benchmarks.md

## image: the inject-fn container image (FROM scratch)
image: build
	docker build --build-arg BIN=$(BIN)/inject-fn -t $(IMAGE) -t kinject/inject-fn:dev .

## dist: release archives for linux, darwin, windows on amd64 and arm64, and checksums
dist:
	go run ./hack/dist -version $(VERSION) -commit $(COMMIT) -out $(DIST)

## krew: krew.yaml for VERSION (a vX.Y.Z tag) with the sha256 of the archives built into dist/, validated
krew:
	go run ./hack/dist -version $(VERSION) -commit $(COMMIT) -out $(DIST) -krew krew.yaml
	cp krew.yaml $(DIST)/inject.yaml
	PATH="$(TOOLS_BIN):$$PATH" validate-krew-manifest -manifest $(DIST)/inject.yaml -skip-install

clean:
	rm -rf $(BIN) $(DIST)
