# firn — run `make help` for the targets.

GO ?= go
SHELL := /bin/bash
COUNT ?= 6
FUZZTIME ?= 10s

# Real servers for the integration tests (see README "Tests"). CI sets
# CI=true: a test whose endpoint is empty then fails instead of skipping.
FIRN_TEST_POSTGRES ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
FIRN_TEST_MYSQL ?= root@tcp(127.0.0.1:3306)/test
FIRN_TEST_ETCD ?= /usr/bin/etcd
export FIRN_TEST_POSTGRES FIRN_TEST_MYSQL FIRN_TEST_ETCD
export FIRN_TEST_ZOOKEEPER ?= /usr/share/java/zookeeper.jar

MODULES := . deploy test/cluster test/browser $(wildcard bench/peers)

# go test runs this many packages at once. Many tests wait out a lease or a
# session on a real server; with go's default (one per core) a waiting test
# holds a slot and the compiles and tests behind it wait too. On 2 cores,
# -p 4 halves the race step (186-199 s against 372 s) and the cold old-go
# step (95 s against 129 s).
TEST_P ?= 4

# The oldest Go the module builds with: go.mod's go line, proved by `make old-go`.
GO_FLOOR := $(shell awk '$$1 == "go" {print $$2}' go.mod)

# make build and make release: VERSION defaults to the checkout's tag (or
# commit), stamped with COMMIT whatever go build records (it records none
# in a git worktree or with -buildvcs=false); BIN is what make build
# writes, DIST where make release's binaries and SHA256SUMS go, PLATFORMS
# what it builds.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BIN ?= bin/firn
DIST ?= dist
# make image: IMAGE_DIR receives the image, IMAGE_ARCH its architecture;
# COMMIT_TIME (the commit's, Unix seconds) is every file's time in it, so
# two builds of one commit give one digest.
IMAGE_DIR ?= $(DIST)/image
IMAGE_ARCH ?= amd64
COMMIT_TIME ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
BUILDINFO := github.com/firn-id/firn/internal/buildinfo

.PHONY: help fmt vet lint test old-go race integration model fuzz bench fleet chaos chaos-short evidence build release image ci services proto screenshot

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

fmt: ## fail if any Go file is not gofmt-formatted
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet every module
	@for m in $(MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

lint: ## golangci-lint v2, pinned in tools/go.mod
	$(GO) run -modfile=tools/go.mod github.com/golangci/golangci-lint/v2/cmd/golangci-lint run ./...
	cd test/cluster && $(GO) run -modfile=../../tools/go.mod github.com/golangci/golangci-lint/v2/cmd/golangci-lint run --config ../../.golangci.yml ./...
	cd test/browser && $(GO) run -modfile=../../tools/go.mod github.com/golangci/golangci-lint/v2/cmd/golangci-lint run --config ../../.golangci.yml ./...

services: ## start PostgreSQL and MariaDB if stopped, install etcd, ZooKeeper, spin, chromium and Prometheus if missing
	@scripts/services.sh

test: services vet ## THE test command: every test of every module, with -race and the real servers
	$(GO) test -race -count=1 -p $(TEST_P) ./...
	$(GO) test -count=1 -tags purego ./opaque/
	$(GO) test -race -count=1 -tags purego -run TestConcurrentCallsShareNoBlock ./opaque/
	cd deploy && $(GO) test -count=1 ./...
	cd test/browser && $(GO) test -count=1 ./...
	@if [ -d bench/peers ]; then cd bench/peers && $(GO) test -count=1 ./...; fi
	$(MAKE) old-go
	$(MAKE) chaos-short

# -short runs the in-process tests only (internal/testenv); go test's own vet
# is off because go vet ran every analyzer just before.
old-go: ## vet and test the root module with the toolchain of go.mod's go line (-short: in-process tests only; no -race)
	GOTOOLCHAIN=go$(GO_FLOOR) $(GO) vet ./...
	GOTOOLCHAIN=go$(GO_FLOOR) $(GO) test -p $(TEST_P) -short -vet=off -count=1 ./...

# STORE=etcd, postgres, mysql or zookeeper runs one node store's fault run
# alone, and not the sites run: ^TestChaos$ leaves TestChaosSites out.
CHAOS_RUN = $(if $(STORE),-run '^TestChaos$$/^$(STORE)$$',)

chaos-short: ## the fault harness's short run on every node store in turn (safety only, >= 2 million IDs on etcd, >= 1 million on the others), then two sites on etcd under the ledger's faults (>= 200,000 IDs; STORE=NAME: one store, no sites): its own step of make test
	cd test/cluster && $(GO) test -count=1 -race -timeout 30m -v $(CHAOS_RUN) ./...

chaos: ## the client against three firn serve (COUNT runs), then the fault harness's long run on every node store (>= 50 million IDs on etcd, 20 million on the others), then the sites run (two sites on etcd and a ledger, every fault and the ledger's, >= 20 million IDs), each with the availability goals (STORE=NAME: one store, no sites): medians and p99
	$(GO) test -count=1 -run TestFaults -v ./client/ -faults.runs $(COUNT)
	cd test/cluster && FIRN_CHAOS=long $(GO) test -count=1 -timeout 120m -v -run $(if $(STORE),'^TestChaos$$/^$(STORE)$$',TestChaos) .

# The stores make evidence runs on; each runs the long run twice: the test
# build, recording store operations for the linearizability check, and
# the production build, IDs only. EVIDENCE receives each run's section,
# its gzipped histories and report.md (never committed).
EVIDENCE_STORES ?= etcd postgres mysql zookeeper
EVIDENCE ?= $(CURDIR)/evidence

evidence: services ## the long run on every store (EVIDENCE_STORES), test and production builds: EVIDENCE/report.md
	rm -rf $(EVIDENCE) && mkdir -p $(EVIDENCE)
	@failed=""; for s in $(EVIDENCE_STORES); do for b in test production; do \
	  echo "== $$s, $$b build"; \
	  (cd test/cluster && FIRN_CHAOS=long FIRN_CHAOS_STORE=$$s FIRN_CHAOS_BUILD=$$b FIRN_EVIDENCE=$(EVIDENCE) \
	    $(GO) test -count=1 -timeout 40m -v -run "^TestChaos\$$/^$$s\$$" .) 2>&1 | tee $(EVIDENCE)/$$s-$$b.log; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || failed="$$failed $$s/$$b"; \
	done; done; \
	(cd test/cluster && $(GO) run ./cmd/firn-evidence $(EVIDENCE)) > $(EVIDENCE)/report.md; \
	cat $(EVIDENCE)/report.md; \
	if [ -n "$$failed" ]; then echo "failed runs (their logs in $(EVIDENCE)):$$failed"; exit 1; fi

race: test ## alias of test, which always runs with -race

integration: services ## only the tests against real etcd, PostgreSQL and MariaDB
	$(GO) test -race -count=1 ./sqlstore/... ./etcdstore/... ./cmd/firn/...

# The model checks are the Go test in model/, so `make test` runs them too.
model: services ## model-check the uniqueness protocol and its mutants with Spin (model/)
	$(GO) test -count=1 -v -run '^TestModels$$' ./model/

fuzz: ## run every fuzz target for FUZZTIME (default 10s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench: ## benchmarks behind docs/performance.md (COUNT runs each, default 6)
	$(GO) test -run '^$$' -bench . -benchmem -count $(COUNT) ./snowflake/ ./segment/ ./opaque/ ./idtext/ ./wide/
	$(GO) test -run '^$$' -bench 'AtomicAdd|Next' -benchmem -count $(COUNT) ./client/
	@if [ -d bench/peers ]; then cd bench/peers && $(GO) test -run '^$$' -bench . -benchmem -count $(COUNT) ./...; fi

# make fleet: FLEET processes (default 1,000) on each of FLEET_STORES, every
# one with its own store client, in one test process (ids/fleet_test.go);
# FLEET_TTL is the lease TTL, FLEET_WINDOW its window (0: 3 s); PostgreSQL,
# a connection per renewal, runs apart at FLEET_PG_TTL (docs/performance.md,
# "What each store carries"). The small fleet's tests run in make test.
FLEET ?= 1000
FLEET_STORES ?= etcd,mysql,zookeeper
FLEET_TTL ?= 10s
FLEET_WINDOW ?= 30s
FLEET_PG_TTL ?= 30s

fleet: services ## the fleet runs behind docs/performance.md "Fleets": cold start, steady state, rolling restart, exhaustion of FLEET (1000) embedded processes on FLEET_STORES, then PostgreSQL
	$(GO) test -count=1 -timeout 180m -v -run '^TestFleet$$' ./ids/ -fleet.size $(FLEET) -fleet.stores $(FLEET_STORES) -fleet.ttl $(FLEET_TTL) -fleet.window $(FLEET_WINDOW)
	$(GO) test -count=1 -timeout 180m -v -run '^TestFleet$$' ./ids/ -fleet.size $(FLEET) -fleet.stores postgres -fleet.ttl $(FLEET_PG_TTL) -fleet.window $(FLEET_WINDOW)

proto: ## regenerate firnpb from firnpb/firn.proto (needs protoc; the output is committed)
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.34.2
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.3.0
	cd firnpb && PATH=$(CURDIR)/bin:$$PATH protoc --go_out=. --go_opt=paths=source_relative \
	  --go-grpc_out=. --go-grpc_opt=paths=source_relative firn.proto

build: ## build bin/firn (BIN), its version and commit stamped as make release does
	$(GO) build -ldflags "-X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)" -o $(BIN) ./cmd/firn

release: ## cross-build firn for PLATFORMS into DIST (version stamped, -trimpath), with the image's tarball and digest (make image), and write DIST/SHA256SUMS
	@rm -rf $(DIST) && mkdir -p $(DIST)
	@for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; out=$(DIST)/firn-$(VERSION)-$$os-$$arch; echo "build $$out"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false \
	    -ldflags "-s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)" \
	    -o $$out ./cmd/firn || exit 1; \
	done
	@$(MAKE) --no-print-directory image IMAGE_DIR=$(DIST)/image
	@cp $(DIST)/image/firn-image.tar $(DIST)/firn-$(VERSION)-image-linux-$(IMAGE_ARCH).tar
	@cp $(DIST)/image/DIGEST $(DIST)/firn-$(VERSION)-image-linux-$(IMAGE_ARCH).digest
	@rm -rf $(DIST)/image
	cd $(DIST) && sha256sum firn-* > SHA256SUMS

image: ## build firn's OCI image without Docker or a registry: IMAGE_DIR/oci (an OCI layout), IMAGE_DIR/firn-image.tar (docker load), IMAGE_DIR/DIGEST
	@rm -rf $(IMAGE_DIR) && mkdir -p $(IMAGE_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -buildvcs=false \
	  -ldflags "-s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)" -o $(abspath $(IMAGE_DIR))/firn ./cmd/firn
	cd deploy && $(GO) run ./cmd/image -binary $(abspath $(IMAGE_DIR))/firn -version $(VERSION) -revision $(COMMIT) \
	  -created $(COMMIT_TIME) -arch $(IMAGE_ARCH) -out $(abspath $(IMAGE_DIR)) > $(abspath $(IMAGE_DIR))/DIGEST
	@rm $(IMAGE_DIR)/firn
	@echo "image $$(cat $(IMAGE_DIR)/DIGEST): $(IMAGE_DIR)/oci, $(IMAGE_DIR)/firn-image.tar (firn:$(VERSION))"

screenshot: ## docs/status-page.png: the status page of a fresh firn serve (own data dir) under a minute of load, in headless Chromium
	cd test/browser && $(GO) run ./cmd/screenshot -root ../.. -out ../../docs/status-page.png

ci: fmt lint test ## what CI checks: format, lint, every test
