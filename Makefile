# tltune build, test and set-up targets.
#
# `make setup` installs the Debian packages the project needs (root only,
# idempotent); `make build` gives bin/tltune; `make test` runs every test.

GO      ?= go
BIN     := bin/tltune
PKGS    := ./...

# Debian packages: OpenCL loader and headers, PoCL (CPU OpenCL for tests and
# the default device here), the Level Zero loader and headers, the SPIR-V
# toolchain (validator, LLVM translator, clang for test kernels), Khronos
# SPIR-V grammar for the generated tables, the C toolchain for cgo, Python
# for the bench report scripts' test, and a
# single-node Slurm (controller, node daemon, client, munge) for the test of
# `tltune slurm`.
DEB_PACKAGES := \
	gcc libc6-dev pkg-config \
	ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo \
	pocl-opencl-icd \
	libze1 libze-dev \
	spirv-tools spirv-headers llvm-spirv-15 clang-15 \
	libsqlite3-dev python3 \
	slurmctld slurmd slurm-client munge

.PHONY: all setup build test test-short bench demo fuzz clean

all: build

setup:
	@bash .ci/setup.sh $(DEB_PACKAGES)

# The version and commit that `tltune version` prints and the results store
# records with every run, stamped here: Go's VCS stamping is missing from
# some builds (no .git, -buildvcs=false) and has no version for the main
# module.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
COMMIT  ?= $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c+dirty; })
LDFLAGS := -X main.stampedVersion=$(VERSION) -X main.stampedCommit=$(COMMIT)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tltune

# gofmt of the same toolchain as go: a file it would change fails the tests.
GOFMT   := $(shell $(GO) env GOROOT)/bin/gofmt

test: build
	@unformatted=$$($(GOFMT) -l $$($(GO) list -f '{{.Dir}}' $(PKGS))); \
		if [ -n "$$unformatted" ]; then echo "gofmt -w these files: $$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s $(PKGS)

# The main job on the default device: tune one GEMM shape.
demo: setup build
	./$(BIN) gemm --m 64 --n 64 --k 32 --dtype f16

# Every fuzz target for FUZZTIME, one worker each: the parser (current and
# released dialects), the whole compiler on every target, the reference
# interpreter, and the .npy reader. A crasher lands in the package's
# testdata/fuzz, where go test replays it from then on.
FUZZTIME ?= 5m
fuzz:
	$(GO) test ./compiler/syntax -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./compiler/syntax -run '^$$' -fuzz '^FuzzReadReleased$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./compiler -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./compiler/interp -run '^$$' -fuzz '^FuzzInterpret$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./internal/npy -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -parallel 1

clean:
	rm -rf bin
