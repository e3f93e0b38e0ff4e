# SPEAR external capabilities. `make help` lists the targets.
GO      ?= go
BIN     := bin
PREFIX  ?= /usr/local
INTEROP := testdata/interop
export GOFLAGS := -buildvcs=false

.PHONY: help build test test-short bench demo lint install interop-deps net-deps fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build spear-term, spear-capability and notes-server into bin/
	$(GO) build -o $(BIN)/ ./cmd/... ./examples/notes-server

interop-deps: $(INTEROP)/node_modules/.package-lock.json ## install the npm MCP servers the interop tests use

$(INTEROP)/node_modules/.package-lock.json: $(INTEROP)/package.json $(INTEROP)/package-lock.json $(INTEROP)/install.sh
	bash $(INTEROP)/install.sh
	@touch $@

net-deps: ## install pasta (passt), which gives the turn's network the outside world
	bash tools/install-pasta.sh

test: interop-deps net-deps ## run every test with the race detector (installs what the tests need)
	SPEAR_REQUIRE_INTEROP=1 SPEAR_REQUIRE_CONFINE=1 $(GO) test -race -count=1 -timeout 30m ./...

test-short: ## run the tests without the race detector or the npm peers
	$(GO) test -count=1 ./...

bench: interop-deps ## run the benchmarks, then the load test at full size (32 sessions, 1,000 invocations)
	bash tools/install-pasta.sh bench
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	SPEAR_LOAD=full $(GO) test -run '^TestLoad$$' -count=1 -v .

demo: build ## run the bundled notes server through spear-term, as a turn would
	bash examples/demo/run.sh

fuzz: ## run every fuzz target for 20 s each
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeMessage$$' -fuzztime 20s ./mcp
	$(GO) test -run '^$$' -fuzz '^FuzzReadLoop$$' -fuzztime 20s ./mcp
	$(GO) test -run '^$$' -fuzz '^FuzzReceive$$' -fuzztime 20s ./entry
	$(GO) test -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime 20s ./shellparse
	$(GO) test -run '^$$' -fuzz '^FuzzQuoteRemoval$$' -fuzztime 20s ./shellparse
	$(GO) test -run '^$$' -fuzz '^FuzzSubmissions$$' -fuzztime 20s ./intercept
	for f in FuzzParseRegistry FuzzParseProjects FuzzParseTurn FuzzEditRegistry; do \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s ./deploy || exit 1; done
	for f in FuzzParseArguments FuzzCompileSchema; do \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s ./gateway || exit 1; done
	for f in FuzzDecodeRequest FuzzDecodeReply FuzzParseRPC; do \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s ./warm || exit 1; done
	$(GO) test -run '^$$' -fuzz '^FuzzClean$$' -fuzztime 20s ./present
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 20s ./internal/handoff
	$(GO) test -run '^$$' -fuzz '^FuzzLen$$' -fuzztime 20s ./internal/termesc
	for f in FuzzReadClaude FuzzReadCodex FuzzReadGemini FuzzReadVSCode FuzzReadCursor FuzzDetect; do \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s ./importer || exit 1; done

lint: ## gofmt and go vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

install: ## install spear-term and spear-capability, side by side, into $(PREFIX)/bin
	$(GO) build -o $(BIN)/ ./cmd/...
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/spear-term $(BIN)/spear-capability $(DESTDIR)$(PREFIX)/bin/

clean: ## remove what the build and the demo made
	rm -rf $(BIN) .demo
