# PulseWire. `make run` starts a development server, `make test` runs every test.
GO        ?= go
# The go command builds with this Go release, which it fetches itself the first time (about 76 MB):
# its standard library has the fixes of net/http, crypto/tls, crypto/x509 and mime/multipart that the
# Go 1.26 releases before 1.26.10 lack. Exported because some configurations pin the installed Go
# (GOTOOLCHAIN=local) and so ignore go.mod's toolchain line.
export GOTOOLCHAIN := go1.27.3
BIN       := bin/pulsewire
# The real recordings make accuracy scores (docs/accuracy.md says what it holds and where from).
DATA      ?= ../shared/data
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build run test check vulncheck bench accuracy synth load memory cluster deps-run deps-test clean

all: check test

# -buildvcs=auto records the commit for `pulsewire version`, even where the Go
# configuration turns it off (GOFLAGS=-buildvcs=false).
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/pulsewire

deps-run:
	@bash scripts/install-deps.sh run

deps-test:
	@bash scripts/install-deps.sh test

## run: build and start Production on 127.0.0.1:8080 and Test on 127.0.0.1:8081, data under ./data
run: deps-run build
	./$(BIN) serve --dev

## test: every test, with the race detector; installs ffmpeg, chromium, postgresql,
## haproxy and the S3-compatible server (versitygw) when missing. The tests start
## their own PostgreSQL cluster, object store and HAProxy on loopback, and must
## (PULSEWIRE_REQUIRE_SERVERS=1): a test that cannot start one fails, not skips.
## The tests run in a private network namespace (scripts/netns.sh): the browser tests
## reach nothing beyond loopback. The modules, the server and the clip generator are
## fetched and built first, and inside, GOPROXY=off makes any need of the network an
## error. Screenshots of the browser tests go to scripts/out/e2e. cmd/pulsewire, whose
## browser tests stream a camera in real time, runs last and alone: beside the other
## packages' CPU-bound tests a starved browser would capture too few frames.
TEST_ENV := PULSEWIRE_BINARY=$(CURDIR)/bin/pulsewire PULSEWIRE_SYNTH=$(CURDIR)/bin/synth \
	PULSEWIRE_VERSITYGW=$(CURDIR)/bin/versitygw PULSEWIRE_REQUIRE_SERVERS=1 GOPROXY=off
test: deps-test
	$(GO) mod download
	$(GO) build -buildvcs=auto -o bin/pulsewire ./cmd/pulsewire
	$(GO) build -o bin/synth ./scripts/synth
	$(TEST_ENV) scripts/netns.sh $(GO) test -race -timeout 20m $$($(GO) list ./... | grep -v '/cmd/pulsewire$$')
	$(TEST_ENV) scripts/netns.sh $(GO) test -race -timeout 20m ./cmd/pulsewire

## check: formatting, no built program tracked, vet, staticcheck (pinned), and the API reference: the OpenAPI
## document lints clean under Redocly CLI and the Redoc bundle served at /docs is the
## pinned one (scripts/apidocs, npm with a lockfile; `check.sh --update` after a bump)
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for f in $$(git ls-files); do if [ -f "$$f" ] && [ "$$(head -c4 "$$f" | tail -c3 | tr -d "\\000")" = ELF ]; then echo "a built program is tracked: $$f"; exit 1; fi; done
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	bash scripts/apidocs/check.sh

## vulncheck: the modules and the Go standard library the server is built with, against the Go
## vulnerability database (govulncheck: only what our code can reach; the database through the Go
## module proxy; VULNDB=VERSION pins it) (docs/operations.md)
vulncheck:
	bash scripts/vulncheck.sh

## bench: speed benchmarks (numbers, not assertions), then the cluster's throughput
## and latency through HAProxy with 1 and 3 instances (scripts/cluster -bench)
bench: deps-test build
	PULSEWIRE_VERSITYGW=$(CURDIR)/bin/versitygw $(GO) test -run '^$$' -bench . -benchmem ./...
	PULSEWIRE_BINARY=$(CURDIR)/$(BIN) PULSEWIRE_VERSITYGW=$(CURDIR)/bin/versitygw $(GO) run ./scripts/cluster -bench

## cluster: PostgreSQL, an S3-compatible store, three instances and HAProxy on
## loopback; prints the addresses and runs until Ctrl-C (scripts/cluster)
cluster: deps-test build
	PULSEWIRE_BINARY=$(CURDIR)/$(BIN) PULSEWIRE_VERSITYGW=$(CURDIR)/bin/versitygw $(GO) run ./scripts/cluster

## accuracy: accuracy on the real recordings in DATA (default ../shared/data; contact PPG, face skin), the
## synthetic clips (the benchmark set encoded and not, fresh seeds, the webcam set, the key-frame
## set) and face detection on labelled photos, drawing docs/figures (the decision's chart, the
## regions picture); answered share beside the error everywhere; RECORDINGS=FOLDER adds your own
## videos and signals listed in FOLDER/reference.csv, PHONES=FOLDER a copy of the Welltory PPG
## data set (fingertips on people's own phones; not shipped) (docs/accuracy.md)
accuracy: deps-run
	$(GO) run ./scripts/accuracy -data $(DATA) -decision-picture docs/figures/decision.svg -regions-picture docs/figures/regions.jpg \
		$(if $(RECORDINGS),-recordings $(RECORDINGS)) $(if $(PHONES),-phones $(PHONES))

## load: concurrent realtime sessions against a fresh server (scripts/load; 40 by default)
load: deps-run
	$(GO) run ./scripts/load

## memory: worst-case inputs against a fresh server; prints the peak resident memory of the
## whole process tree (server, ffmpeg, ffprobe) and the memory after two minutes idle (docs/limits.md)
memory: deps-run
	$(GO) run ./scripts/memory

## synth: write the synthetic benchmark clips and their ground truth into scripts/out/synth,
## the webcam-like ones into scripts/out/synth-webcam (docs/synthetic-data.md)
synth: deps-run
	$(GO) run ./scripts/synth -presets -out scripts/out/synth
	$(GO) run ./scripts/synth -presets -set webcam -out scripts/out/synth-webcam

clean:
	rm -rf bin
