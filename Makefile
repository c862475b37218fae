# The two commands of the README: `make run` and `make test`. Both install what
# a fresh machine lacks (Go modules, npm packages, Debian's chromium).

SHELL := /bin/bash
GO ?= go
BIN := bin/loupe
WEB := web
LOUPE_FLAGS ?=
# staticcheck, pinned; `make test` installs it from the Go module proxy.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck

.PHONY: run test console-committed dist dist-check lint-go test-go test-web test-e2e bench bench-peers differential storage-conformance build deps demo-data web-deps fixture-deps chromium clean

## run: build everything and serve the app with the demo data (emulator-data/)
run: build
	$(BIN) serve --import emulator-data $(LOUPE_FLAGS)

## test: every test — Go (unit, SDK conformance), the web gates, browser journeys
test: deps build console-committed test-go test-web test-e2e

build: web-deps
	cd $(WEB) && npm run build
	$(GO) build -o $(BIN) ./cmd/loupe

# The console's build is committed (internal/console/dist), so that `go install`
# gives the whole program without Node; make build rebuilds it from web/, and
# this fails when the two differ.
console-committed: build
	@if ! git diff --quiet -- internal/console/dist || [ -n "$$(git ls-files --others --exclude-standard -- internal/console/dist)" ]; then \
	  git status --short -- internal/console/dist; \
	  echo "internal/console/dist differs from what web/ builds: commit the rebuilt console (git add internal/console/dist)"; exit 1; fi

deps: web-deps fixture-deps chromium
	$(GO) mod download
	cd functions && $(GO) mod download

# The Node.js functions fixtures' packages (firebase-functions, firebase-admin,
# typescript), installed once for all of them; npm ci only when their lock changed.
FIXTURES := $(WEB)/e2e/fixtures/functions
fixture-deps: $(FIXTURES)/node_modules/.package-lock.json
$(FIXTURES)/node_modules/.package-lock.json: $(FIXTURES)/package-lock.json
	cd $(FIXTURES) && npm ci --no-audit --no-fund
	@touch $@

# npm ci only when package-lock.json changed since the last install.
web-deps: $(WEB)/node_modules/.package-lock.json
$(WEB)/node_modules/.package-lock.json: $(WEB)/package-lock.json
	cd $(WEB) && npm ci --no-audit --no-fund
	@touch $@

# Browser tests drive Debian's chromium headless shell (and chromium itself
# where a page must lose focus); install them (with an emoji font, and ffmpeg
# for test clips) when absent.
chromium:
	@command -v chromium >/dev/null && command -v chromium-headless-shell >/dev/null && command -v ffmpeg >/dev/null && [ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-headless-shell ffmpeg fonts-noto-color-emoji >/dev/null; }

# gofmt, staticcheck and go mod tidy -diff over both Go modules; any
# finding fails the run.
lint-go: $(STATICCHECK)
	@unformatted=$$(gofmt -l cmd internal functions); \
	  if [ -n "$$unformatted" ]; then echo "gofmt -l: these files are not formatted:"; echo "$$unformatted"; exit 1; fi
	$(STATICCHECK) ./...
	cd functions && $(CURDIR)/$(STATICCHECK) ./...
	$(GO) mod tidy -diff
	cd functions && $(GO) mod tidy -diff

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(@D) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# The packages with concurrency of their own run their tests under the race
# detector; the rest run without it. Their tests run loupe in the test process
# (loupetest.Start), so the detector watches the server as well as the client;
# only the tests that need a process of loupe's own (kill -9, the functions
# child, the benchmarks) start the ordinary binary.
RACE_PACKAGES := firestore wal webchannel triggers functions storage auth guard requestlog pubsub database messaging stripe hub
RACE_LIST := /internal/($(subst $(eval) ,|,$(RACE_PACKAGES)))(/|$$)

# Tests run against the binary just built: LOUPE_BIN is stat'ed by every test
# that starts it, so Go's test cache never answers for an older binary.
test-go: lint-go build
	$(GO) vet ./...
	LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test $$($(GO) list ./... | grep -v -E '$(RACE_LIST)')
	LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test -race $$($(GO) list ./... | grep -E '$(RACE_LIST)')
	# bin/loupe and emulator-data/ lie outside the functions module, where
	# go test's cache does not see them change: its tests always run.
	cd functions && $(GO) vet ./... && LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 ./...

## demo-data: regenerate emulator-data/ from the seed (internal/demo), then
## let the profiles function's own code derive mentors/ and the gathered reviews
demo-data: build
	LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test ./internal/demo -run TestSeed -update
	cd functions && LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test ./profiles -run TestDemoData -update

test-web:
	cd $(WEB) && npm run gates

test-e2e: build
	cd $(WEB) && LOUPE_BIN=$(CURDIR)/$(BIN) npm run e2e

## bench: benchmarks, and the long crash soak and load test (docs/reliability.md); raw output to docs/bench-latest.txt (ignored), current figures kept in docs/benchmarks.md
bench: build fixture-deps
	LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem ./... | tee docs/bench-latest.txt
	cd $(WEB) && LOUPE_BIN=$(CURDIR)/$(BIN) node bench/webchannel-latency.mjs | tee -a ../docs/bench-latest.txt
	cd $(WEB) && LOUPE_BIN=$(CURDIR)/$(BIN) node bench/first-paint.mjs | tee -a ../docs/bench-latest.txt
	cd $(WEB) && LOUPE_BIN=$(CURDIR)/$(BIN) node bench/console-browse.mjs | tee -a ../docs/bench-latest.txt
	cd $(WEB) && LOUPE_BIN=$(CURDIR)/$(BIN) node bench/console-auth.mjs | tee -a ../docs/bench-latest.txt
	cd $(WEB) && LOUPE_BIN=$(CURDIR)/$(BIN) node bench/functions-node.mjs | tee -a ../docs/bench-latest.txt
	cd $(WEB) && LOUPE_BIN=$(CURDIR)/$(BIN) node bench/database.mjs | tee -a ../docs/bench-latest.txt
	cd internal/storage/fakegcsbench && LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem . | tee -a $(CURDIR)/docs/bench-latest.txt
	set -o pipefail; LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test ./internal/reliability -long -count=1 -v -timeout 30m | tee -a docs/bench-latest.txt

## bench-peers: loupe side by side with Google's own emulators found on this machine; the table goes into docs/benchmarks.md
# firebase-tools, a stand-in for its Storage rules runtime, links to the Cloud
# SDK's Firestore and Pub/Sub emulators under firebase-tools' names, the
# functions fixtures' npm packages and the emulators codelab (from
# EMULATORS_CODELAB_GIT, a git directory of it, else cloned) go into
# PEERS_CACHE, outside the repository; the Cloud SDK's emulators come with the
# machine. Not part of make test.
PEERS_CACHE ?= $(HOME)/.cache/loupe-peers
bench-peers: build
	bash bench/peers/setup.sh "$(PEERS_CACHE)" 14.27.0
	LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) run ./bench/peers -cache "$(PEERS_CACHE)" -doc docs/benchmarks.md

## storage-conformance: firebase-tools' own Storage conformance suite, unchanged, against loupe (docs/fidelity.md); FIREBASE_TOOLS=<checkout or git dir>, MOCHA_ARGS=<more mocha arguments>
# The firebase-tools tree and its npm packages go into a cache outside the
# repository; FIREBASE_TOOLS defaults to the mirror of the machines loupe is
# developed on, and without a checkout the run is skipped, saying so. Not part
# of make test.
FIREBASE_TOOLS ?= $(wildcard /work/.mirror/firebase+firebase-tools/repo)
MOCHA_ARGS ?=
storage-conformance:
	$(GO) build -o $(BIN) ./cmd/loupe
	MOCHA_ARGS="$(MOCHA_ARGS)" bash bench/storage-conformance/run.sh $(BIN) $(FIREBASE_TOOLS)

## differential: the differential test against Google's official Firestore emulator, 200 seeds (make test runs 3)
differential: build
	LOUPE_DIFFERENTIAL_SEEDS=200 LOUPE_BIN=$(CURDIR)/$(BIN) $(GO) test ./internal/firestore -run TestDifferential -count=1 -timeout 30m

## dist: the release into dist/: static binaries for linux, darwin and windows
## on amd64 and arm64 (console embedded) archived with SHA256SUMS, and the npm
## packages; `make dist VERSION=1.2.3`. The same commit gives the same bytes
## (dist-check builds it twice and compares).
VERSION ?= 0.0.0-dev
DIST ?= dist
dist:
	$(GO) run ./internal/dist -out $(DIST) -version $(VERSION) -commit $$(git rev-parse HEAD) -date $$(git log -1 --format=%ct)

dist-check:
	$(MAKE) dist DIST=dist/check-1
	$(MAKE) dist DIST=dist/check-2
	diff dist/check-1/SHA256SUMS dist/check-2/SHA256SUMS && echo "dist: both builds are byte for byte the same"

clean:
	rm -rf bin $(WEB)/dist .loupe dist
