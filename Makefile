# Ferry: two commands from a fresh clone.
#   make run    install missing system packages, build, push sample-media/ with config.yml
#   make test   install what the tests need, build (warnings are errors), run every test
#   make test-unit  the tests that need no server, process or inotify (under a minute after
#               the build); the others are reported as skipped
#   make flake-hunt  the whole suite FLAKE_RUNS times (default 10) from a fresh clone, half of
#               them beside FLAKE_LOAD busy processes (default 2); writes bench-results/flake-hunt.md
#   make bench  compare ferry with cp, rsync and rclone on the same data, plain files with
#               archive bundles (writes tables)
#   make bench-scale  time and peak memory on 1,000,000 small files (SCALE_FILES=N; ~30 min)
#   make fuzz   libFuzzer on the config and listing parsers (FUZZ_SECONDS per target, default 60)
#   make soak   reliability soak: kill -9, faults, outages, rewrites, full disks (~10 min;
#               writes bench-results/soak.md; options: make soak SOAK_ARGS="--trials 5")

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
SWIFT ?= swift
FERRY := .build/debug/ferry
BUILD_LOG := .build/ferry-build.log

.PHONY: run build test test-unit flake-hunt deps test-deps bench bench-scale fuzz soak clean

deps:
	@bash scripts/bootstrap.sh build

test-deps:
	@bash scripts/bootstrap.sh test

build: deps
	$(SWIFT) build

run: build
	$(FERRY) push --config config.yml
	$(FERRY) status --config config.yml

test: test-deps
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@bash scripts/check-warnings.sh $(BUILD_LOG)
	$(SWIFT) test --skip-build

test-unit: deps
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@bash scripts/check-warnings.sh $(BUILD_LOG)
	FERRY_TEST_UNIT_ONLY=1 $(SWIFT) test --skip-build

flake-hunt:
	bash scripts/flake-hunt.sh $(or $(FLAKE_RUNS),10) --load $(or $(FLAKE_LOAD),2)

bench:
	@bash scripts/bootstrap.sh bench
	$(SWIFT) build -c release
	bash scripts/bench-local.sh
	python3 scripts/bench-webdav.py
	python3 scripts/bench-bundles.py

bench-scale:
	@bash scripts/bootstrap.sh bench
	$(SWIFT) build -c release
	python3 scripts/bench-scale.py $(if $(SCALE_FILES),--files $(SCALE_FILES),)

fuzz: deps
	bash scripts/fuzz.sh

soak: test-deps
	$(SWIFT) build -c release
	python3 scripts/soak.py $(SOAK_ARGS)

clean:
	rm -rf .build .build-fuzz .ferry
