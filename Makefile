# kubectl-inject: build, try, test and release.
#
#   make demo    build, then inject the embedded Envoy sidecar into an example app
#   make test    install the test tools (pinned), build the test API server, run every test
#
MODULE  := github.com/kinject/kubectl-inject
# vX.Y.Z on a tag; an untagged build says so: v0.0.0-dev+COMMIT (see hack/version.sh).
# Computed once; `make VERSION=v1.2.3 ...` overrides.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell hack/version.sh)
endif
ifeq ($(origin COMMIT),undefined)
COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
endif
LDFLAGS := -s -w -X $(MODULE)/pkg/version.Version=$(VERSION) -X $(MODULE)/pkg/version.Commit=$(COMMIT)
# Image tags cannot hold "+": v0.0.0-dev+b6a2c90 is tagged v0.0.0-dev_b6a2c90.
IMAGE   ?= kinject/inject-fn:$(subst +,_,$(VERSION))
IMAGES  ?= $(IMAGE) kinject/inject-fn:dev
BIN     ?= bin
DIST    ?= dist
# dist: the release matrix by default; PLATFORMS=linux/amd64 builds one
PLATFORMS ?=
KINJECT_CACHE ?= $(HOME)/.cache/kubectl-inject
TOOLS_BIN := $(KINJECT_CACHE)/bin
GOTEST_FLAGS ?= -timeout 45m

export CGO_ENABLED := 0
export KINJECT_CACHE

.PHONY: all build demo test unit e2e live tools bench fuzz mutate image dist krew version clean
all: build

## version: print the version the binaries, the image and the archives get
version:
	@echo $(VERSION)

## build: the binaries into bin/ (kubectl-inject hands all but --local to kinject-live beside it;
## it and inject-fn run kinject-cel beside them for expressions beyond the core's own)
build:
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-inject ./plugin/kubectl-inject
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kinject-live ./plugin/kinject-live
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kinject-cel ./plugin/kinject-cel
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/inject-fn ./fn/inject-fn

## demo: inject the embedded Envoy sidecar into examples/cli/app.yaml and show the result
demo: build
	@echo '$$ kubectl inject --local -f examples/cli/app.yaml'
	@$(BIN)/kubectl-inject --local -f examples/cli/app.yaml
	@echo
	@echo '$$ kubectl inject --local -f examples/cli/app.yaml | diff examples/cli/app.yaml -   # only added lines'
	@$(BIN)/kubectl-inject --local -f examples/cli/app.yaml 2>/dev/null | diff examples/cli/app.yaml - || true

## tools: install the pinned test tools (kwok among them, and the real node's containerd from apt)
## and build the test kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kubelet (cached)
tools:
	hack/install-tools.sh
	hack/build-apiserver.sh

## test: every test: core, plugin, function, e2e (kustomize, kpt, Docker, krew), live and admission (kube-apiserver + etcd),
## rollouts and restarts on a control plane (controller manager, scheduler, kwok), the documents parsed on
## every core under the race detector, then every fuzz target for 20 s
test: tools
	PATH="$(TOOLS_BIN):$$PATH" go test $(GOTEST_FLAGS) ./...
	CGO_ENABLED=1 go test -race -run 'Ahead|Parsed' ./pkg/manifest ./pkg/inject
	$(MAKE) fuzz FUZZTIME=20s

## unit: the fast tests only (no external tools)
unit:
	go test -short ./...

## e2e / live: one part of the suite
e2e: tools
	PATH="$(TOOLS_BIN):$$PATH" go test $(GOTEST_FLAGS) ./test/e2e/... ./test/krew/... ./test/helm/...
live: tools
	PATH="$(TOOLS_BIN):$$PATH" go test $(GOTEST_FLAGS) ./test/live/... ./test/cluster/... ./test/admission/... ./test/rollout/... ./test/node/...

## fuzz: run each fuzz target for FUZZTIME (default 60s); hack/fuzz.sh runs one
## again when Go's engine timed out at the end having found nothing
FUZZTIME ?= 60s
fuzz:
	hack/fuzz.sh ./pkg/inject FuzzInject $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject FuzzParseConfig $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject FuzzParseStatus $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject/record FuzzEncodeIsJSON $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject FuzzQuantityPattern $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject/podexpr FuzzSubsetAgreesWithCEL $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject/podexpr FuzzSubsetExpressions $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject FuzzProfiles $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject FuzzParameterChecks $(FUZZTIME)
	hack/fuzz.sh ./fn/processor FuzzResourceList $(FUZZTIME)
	hack/fuzz.sh ./pkg/yamltext FuzzDecodeBatch $(FUZZTIME)
	hack/fuzz.sh ./pkg/admission FuzzObjectSelectorAsAPIServer $(FUZZTIME)
	hack/fuzz.sh ./pkg/inject/grammar FuzzSameQuantityAsKubernetes $(FUZZTIME)

## mutate: mutation testing (gremlins, pinned) of the packages of hack/mutate-gate.txt; prints the
## mutants that survive and fails when a package's test efficacy is below its minimum there.
## Hours on 2 cores for all of them, so not part of make test:
## make mutate MUTATE_PKGS=pkg/rollout runs one package (or a file of it);
## make mutate MUTATE_SINCE=main~3 mutates only the lines changed since that commit
## (.ci/run does so since hack/mutate-base)
MUTATE_PKGS ?=
MUTATE_SINCE ?=
mutate:
	hack/mutate.sh $(if $(MUTATE_SINCE),--since $(MUTATE_SINCE)) $(MUTATE_PKGS)

## bench: benchmarks as ratios measured in one run; writes docs/benchmarks.md
## (BASELINE=policy.yaml: also runs that policy in every admission round, against this one)
bench: tools build
	go test ./pkg/inject -run '^$$' -bench . -benchmem -count 1
	PATH="$(TOOLS_BIN):$$PATH" go run ./hack/bench -out docs/benchmarks.md $(if $(BASELINE),-admission-baseline $(BASELINE))

## image: the inject-fn container image (FROM scratch), labelled with the binaries' version and commit;
## the build context holds only what the Dockerfile copies
image: build
	rm -rf $(BIN)/image-context
	mkdir -p $(BIN)/image-context/fn/image $(BIN)/image-context/bin
	cp fn/image/passwd fn/image/group $(BIN)/image-context/fn/image/
	cp $(BIN)/inject-fn $(BIN)/kinject-cel $(BIN)/image-context/bin/
	docker build --build-arg BIN=bin/inject-fn --build-arg VERSION=$(VERSION) --build-arg REVISION=$(COMMIT) \
		$(addprefix -t ,$(IMAGES)) -f Dockerfile $(BIN)/image-context

## dist: release archives for linux, darwin, windows on amd64 and arm64, the Helm 4 plugin archives
## (plugin/helm/plugin.yaml with the binaries), inject-fn binaries, checksums.txt,
## and dist/krew.yaml: krew.yaml rendered with the sha256 of these archives
dist:
	go run ./hack/dist -version $(VERSION) -commit $(COMMIT) -out $(DIST) $(if $(PLATFORMS),-platforms $(PLATFORMS))

## krew: dist, then check dist/krew.yaml with krew's validator
krew: dist
	cp $(DIST)/krew.yaml $(DIST)/inject.yaml
	PATH="$(TOOLS_BIN):$$PATH" validate-krew-manifest -manifest $(DIST)/inject.yaml -skip-install
	rm $(DIST)/inject.yaml

clean:
	rm -rf $(BIN) $(DIST)
