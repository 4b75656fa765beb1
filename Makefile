# firn — run `make help` for the targets.

GO ?= go
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

.PHONY: help fmt vet lint test race integration model fuzz bench chaos chaos-short build ci services proto

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

services: ## start PostgreSQL and MariaDB if stopped, install etcd, spin and chromium if missing
	@scripts/services.sh

test: services vet ## THE test command: every test of every module, with -race and the real servers
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -tags purego ./opaque/
	$(GO) test -race -count=1 -tags purego -run TestConcurrentCallsShareNoBlock ./opaque/
	cd deploy && $(GO) test -count=1 ./...
	cd test/browser && $(GO) test -count=1 ./...
	@if [ -d bench/peers ]; then cd bench/peers && $(GO) test -count=1 ./...; fi
	$(MAKE) chaos-short

# STORE=etcd, postgres or mysql runs one node store's fault run alone.
CHAOS_RUN = $(if $(STORE),-run 'TestChaos/^$(STORE)$$',)

chaos-short: ## the fault harness's short run on every node store in turn (safety only, >= 2 million IDs on etcd, >= 1 million on the others; STORE=NAME: one): its own step of make test
	cd test/cluster && $(GO) test -count=1 -race -timeout 30m -v $(CHAOS_RUN) ./...

chaos: ## the client against three firn serve (COUNT runs), then the fault harness's long run on every node store (>= 50 million IDs on etcd, 20 million on the others, the availability goals; STORE=NAME: one): medians and p99
	$(GO) test -count=1 -run TestFaults -v ./client/ -faults.runs $(COUNT)
	cd test/cluster && FIRN_CHAOS=long $(GO) test -count=1 -timeout 120m -v -run $(if $(STORE),'TestChaos/^$(STORE)$$',TestChaos) .

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

proto: ## regenerate firnpb from firnpb/firn.proto (needs protoc; the output is committed)
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.34.2
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.3.0
	cd firnpb && PATH=$(CURDIR)/bin:$$PATH protoc --go_out=. --go_opt=paths=source_relative \
	  --go-grpc_out=. --go-grpc_opt=paths=source_relative firn.proto

build: ## build bin/firn
	$(GO) build -o bin/firn ./cmd/firn

ci: fmt lint test ## what CI checks: format, lint, every test
