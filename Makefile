# PulseWire. `make run` starts a development server, `make test` runs every test.
GO        ?= go
BIN       := bin/pulsewire
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build run test check bench accuracy synth load deps-run deps-test clean

all: check test

build:
	$(GO) build -o $(BIN) ./cmd/pulsewire

deps-run:
	@bash scripts/install-deps.sh run

deps-test:
	@bash scripts/install-deps.sh test

## run: build and start Production on 127.0.0.1:8080 and Test on 127.0.0.1:8081, data under ./data
run: deps-run build
	./$(BIN) serve --dev

## test: every test, with the race detector; installs ffmpeg and chromium when missing.
## The tests run in a private network namespace (scripts/netns.sh): the browser tests
## reach nothing beyond loopback. The modules, the server and the clip generator are
## fetched and built first, and inside, GOPROXY=off makes any need of the network an
## error. Screenshots of the browser tests go to scripts/out/e2e. cmd/pulsewire, whose
## browser tests stream a camera in real time, runs last and alone: beside the other
## packages' CPU-bound tests a starved browser would capture too few frames.
TEST_ENV := PULSEWIRE_BINARY=$(CURDIR)/bin/pulsewire PULSEWIRE_SYNTH=$(CURDIR)/bin/synth GOPROXY=off
test: deps-test
	$(GO) mod download
	$(GO) build -o bin/pulsewire ./cmd/pulsewire
	$(GO) build -o bin/synth ./scripts/synth
	$(TEST_ENV) scripts/netns.sh $(GO) test -race -timeout 20m $$($(GO) list ./... | grep -v '/cmd/pulsewire$$')
	$(TEST_ENV) scripts/netns.sh $(GO) test -race -timeout 20m ./cmd/pulsewire

## check: formatting, vet and staticcheck (pinned)
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## bench: speed benchmarks (numbers, not assertions)
bench: deps-test
	$(GO) test -run '^$$' -bench . -benchmem ./...

## accuracy: accuracy evaluation on the real recordings in ../shared/data, the synthetic
## benchmark clips (encoded and not) and the webcam-like synthetic clips
accuracy: deps-run
	$(GO) run ./scripts/accuracy

## load: concurrent realtime sessions against a fresh server (scripts/load; 40 by default)
load: deps-run
	$(GO) run ./scripts/load

## synth: write the synthetic benchmark clips and their ground truth into scripts/out/synth,
## the webcam-like ones into scripts/out/synth-webcam (docs/synthetic-data.md)
synth: deps-run
	$(GO) run ./scripts/synth -presets -out scripts/out/synth
	$(GO) run ./scripts/synth -presets -set webcam -out scripts/out/synth-webcam

clean:
	rm -rf bin
