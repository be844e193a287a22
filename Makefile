# kubectl-inject: build, test and release.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/kinject/kubectl-inject/pkg/version.Version=$(VERSION) -X github.com/kinject/kubectl-inject/pkg/version.Commit=$(COMMIT)
IMAGE   ?= kinject/inject-fn:$(VERSION)
BIN     := bin

export CGO_ENABLED := 0

.PHONY: all build test image clean
all: build

build:
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-inject ./plugin
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/inject-fn ./fn

test:
	go test ./...

image: build
	docker build --build-arg BIN=$(BIN)/inject-fn -t $(IMAGE) -t kinject/inject-fn:dev .

clean:
	rm -rf $(BIN) dist
