# Developer shortcuts; CI runs scripts/test (== make test).
GO ?= go
FUZZTIME ?= 60s

.PHONY: build test race vet lint fuzz bench bench-peers clean

build:
	$(GO) build -o bin/courtesy ./cmd/courtesy

test:
	scripts/test

race:
	$(GO) test -race ./...

vet:
	$(GO) vet ./...

lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

# Every fuzz target for FUZZTIME each.
fuzz:
	scripts/fuzz $(FUZZTIME)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The peer benchmarks (crawl vs colly, proxy vs httputil and Squid, the gRPC
# frontier service vs the embedded frontier, RDF extraction vs the npm
# extractors); see docs/performance.md.
bench-peers:
	bench/crawl/run.sh
	bench/proxy/run.sh
	go run ./bench/frontier-service
	go run ./bench/rdf

clean:
	rm -rf bin
