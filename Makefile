# FaceSeal — the two commands: `make demo` and `make test`. Both run `make setup` first.
SHELL := /bin/bash
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
export FACESEAL_CACHE ?= $(HOME)/.cache/faceseal

.PHONY: setup build release test demo fuzz bench-crypto bench-face bench-wait bench-authority chaos ct-check clean

## setup: install what is missing (Debian packages, PyPI face models and test images). Idempotent.
setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

## release: the optimised build (`make demo` and the benchmarks run it). Cross-module optimisation lets a module's
## generic code be specialised in the modules that call it (docs/PERFORMANCE.md, "Session 16"); a Makefile flag rather
## than a Package.swift setting, which would keep other packages from depending on FaceSeal's libraries.
RELEASE_FLAGS ?= -Xswiftc -cross-module-optimization
release: setup
	$(SWIFT) build -c release $(RELEASE_FLAGS) $(SWIFT_BUILD_FLAGS)

## test: set-up, a PostgreSQL server for the storage suite, then every test.
test: setup
	@SWIFT=$(SWIFT) bash scripts/with-postgres.sh bash scripts/run-tests.sh $(SWIFT_BUILD_FLAGS)

## fuzz: every libFuzzer target of Fuzz/ for FUZZ_SECONDS (default 60) each; one `fuzz target=… execs=… crashes=…` line per target.
fuzz: setup
	@SWIFT=$(SWIFT) bash scripts/fuzz.sh

## demo: the whole system on loopback with the embedded SQLite default and real face images.
demo: release
	.build/release/faceseal demo

bench-crypto: release
	@bash scripts/bench-crypto.sh

## ct-check: the ML-KEM/ML-DSA vector kernels under valgrind with secret-marked inputs (constant time).
ct-check:
	@bash scripts/ct-check.sh

bench-face: release
	@bash scripts/bench-face.sh

## bench-wait: CPU of clients waiting 30 s on a silent server (FaceSeal's HTTPClient, the ping client, curl).
bench-wait: release
	.build/release/faceseal bench wait

## bench-authority: full sign-in ceremonies/s, per-step p50/p99, CPU and memory on SQLite and PostgreSQL, beside the
## HTTP ceilings (docs/PERFORMANCE.md). BENCH_ARGS are passed on, e.g. BENCH_ARGS="--seconds 30 --pending 10000".
bench-authority: release
	@bash scripts/bench-authority.sh $(BENCH_ARGS)

## chaos: the authority killed with SIGKILL 50 times during ceremonies, on SQLite and PostgreSQL; prints
## `chaos db=… kills=… ceremonies=… lost=0 duplicated=0` (`faceseal bench chaos`; CHAOS_ARGS passed on); then a
## rolling restart of two instances on PostgreSQL, 20 SIGTERMs, `restart db=postgres … abandoned=0`.
chaos: release
	@.build/release/faceseal bench chaos --database sqlite $(CHAOS_ARGS)
	@bash scripts/with-postgres.sh .build/release/faceseal bench chaos --database postgres $(CHAOS_ARGS)
	@bash scripts/with-postgres.sh .build/release/faceseal bench chaos --database postgres --rolling-restarts 20 --concurrency 32

clean:
	rm -rf .build
