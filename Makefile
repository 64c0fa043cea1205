# Ferry: two commands from a fresh clone.
#   make run    install missing system packages, build, push sample-media/ with config.yml
#   make test   install what the tests need, build (warnings are errors), run every test
#   make bench  compare ferry with cp, rsync and rclone on the same data (writes a table)
#   make fuzz   libFuzzer on the config and listing parsers (FUZZ_SECONDS per target, default 60)

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
SWIFT ?= swift
FERRY := .build/debug/ferry
BUILD_LOG := .build/ferry-build.log

.PHONY: run build test deps test-deps bench fuzz clean

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

bench:
	@bash scripts/bootstrap.sh bench
	$(SWIFT) build -c release
	bash scripts/bench-local.sh
	python3 scripts/bench-webdav.py

fuzz: deps
	bash scripts/fuzz.sh

clean:
	rm -rf .build .build-fuzz .ferry
