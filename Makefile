# Developer tasks. Release builds use the same flags as .goreleaser.yaml.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo "(devel)")
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILDINFO := github.com/regctl/regctl/internal/buildinfo
LDFLAGS   := -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)

# goreleaser is run, not required by go.mod: the newest v2 that builds with
# the Go regctl is built with.
GORELEASER := github.com/goreleaser/goreleaser/v2@v2.15.1

# K8S picks the Kubernetes regctl carries: empty is the newest release, the
# root go.mod's, built as bin/regctl; a minor (1.36) an older release (see
# releases/go); a path a Kubernetes source tree, built as bin/regctl-src
# (see releases/source and docs/source.md).
K8S ?=
ifeq ($(K8S),)
BIN := bin/regctl
GO  := go
else ifneq ($(findstring /,$(K8S)),)
BIN := bin/regctl-src
GO  := releases/source $(K8S)
LDFLAGS += $(shell releases/source $(K8S) ldflags)
else
BIN := bin/regctl-$(K8S)
GO  := releases/go $(K8S)
endif

.PHONY: build test test-releases docs golden release-check snapshot

## build: bin/regctl, stripped, as a release builds it; K8S=1.35 writes bin/regctl-1.35, K8S=/path/to/kubernetes bin/regctl-src
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/regctl

## test: vet and the whole test suite, against in-process etcd and kube-apiserver
test:
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) test ./...

## test-releases: for each older release, vet, its route table and its agreement tests
test-releases:
	releases/check

## docs: regenerate docs/reference and docs/man from the command tree
docs:
	go run ./cmd/gendocs docs

## golden: rewrite cmd/regctl/testdata from the current output (K8S=1.36: that release's); review the diff
golden:
	$(GO) test ./cmd/regctl -update

## release-check: validate .goreleaser.yaml with the pinned goreleaser
release-check:
	go run $(GORELEASER) check

## snapshot: the release archives for this machine's platform, in dist/
snapshot:
	go run $(GORELEASER) release --snapshot --clean --skip=publish
