# Ferry: two commands from a fresh clone.
#   make run    install missing system packages, build, push sample-media/ with config.yml
#   make test   install what the tests need, build (warnings are errors), run every test
#   make test-unit  the tests that need no server, process or inotify (under a minute after
#               the build); the others are reported as skipped
#   make flake-hunt  the whole suite FLAKE_RUNS times (default 10) from a fresh clone, half of
#               them beside FLAKE_LOAD busy processes (default 2); writes bench-results/flake-hunt.md
#   make bench  compare ferry with cp, rsync and rclone on the same data, plain files with
#               archive bundles (writes tables)
#   make bench-scale  time and peak memory at 10,000, 100,000 and 1,000,000 small files against
#               rsync, two-way sync against unison and rclone bisync, and the daemon (ready,
#               idle CPU, a new file's delay) at 100,000 (~35 min); SCALE_FILES=N,N sets the
#               sizes of every part, SCALE_CASES=push,sync,daemon picks parts, SCALE_ONE_CORE=1
#               runs every tool under taskset -c 0; appends to bench-results/scale.md
#   make fuzz   libFuzzer on the config and listing parsers (FUZZ_SECONDS per target, default 60)
#   make soak   reliability soak: kill -9, faults, outages, rewrites, full disks (~10 min;
#               writes bench-results/soak.md; options: make soak SOAK_ARGS="--trials 5"),
#               then the daemon soak (10 min of churn, faults, reloads and API clients;
#               bench-results/daemon-soak.md: memory and descriptors flat; DAEMON_SOAK_ARGS),
#               then the hostile soak, then the several-devices simulation with
#               SIMULATION_SEEDS seeds (default 20,000, about 30 min; make test runs 300)
#   make hostile  ferry against hostile remotes and plugins, peak memory measured (~3 min;
#               writes bench-results/hostile-soak.md; options: HOSTILE_ARGS="--trials 5")
#   make deb     a Debian package (.build/deb/), the binary with the Swift runtime inside;
#               make test-package installs it with apt-get, uses it and removes it
#   make install   release build into ~/.local: the binary, bash/zsh/fish completions, the
#               man page and the systemd user unit (PREFIX=/usr/local for all users;
#               DESTDIR for packaging); make uninstall removes them

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
SWIFT ?= swift
FERRY := .build/debug/ferry
BUILD_LOG := .build/ferry-build.log
# Release builds link the Swift runtime and Foundation statically: `ferry --version` takes
# about 25 ms instead of 38 (the dynamic loader no longer binds symbols across a dozen
# Swift libraries); a no-op push of 20,000 files to WebDAV takes about 0.25 s
# (docs/benchmarks.md).
STATIC_STDLIB := --static-swift-stdlib
# Only the ferry product: `swift build -c release` alone also builds the test-support
# target, which imports Testing, and a release build does not find that module (seen on a
# fresh machine: `make bench-scale` stopped there).
RELEASE_BUILD := $(SWIFT) build -c release $(STATIC_STDLIB) --product ferry


.PHONY: deb test-package
.PHONY: run build test test-control-api test-unit flake-hunt deps test-deps install-deps bench bench-scale fuzz soak hostile clean install uninstall

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
	@bash scripts/check-free-space.sh
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@bash scripts/check-warnings.sh $(BUILD_LOG)
	SWIFT="$(SWIFT)" bash scripts/run-tests.sh

# The control API against a running daemon, schemathesis on docs/openapi.yaml and the
# status page in headless chromium (Tests/control-api; screenshots in .build/screenshots).
# `make test` runs them beside the Swift groups (scripts/run-tests.sh).
test-control-api:
	python3 -m pytest -q -p no:cacheprovider Tests/control-api

test-unit: deps
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@bash scripts/check-warnings.sh $(BUILD_LOG)
	FERRY_TEST_UNIT_ONLY=1 $(SWIFT) test --skip-build

flake-hunt:
	bash scripts/flake-hunt.sh $(or $(FLAKE_RUNS),10) --load $(or $(FLAKE_LOAD),2)

bench:
	@bash scripts/bootstrap.sh bench
	$(RELEASE_BUILD)
	bash scripts/bench-local.sh
	python3 scripts/bench-webdav.py
	python3 scripts/bench-s3.py
	python3 scripts/bench-bundles.py
	python3 scripts/bench-devices.py

bench-scale:
	@bash scripts/bootstrap.sh bench
	$(RELEASE_BUILD)
	python3 scripts/bench-scale.py $(if $(SCALE_FILES),--files $(SCALE_FILES),) \
		$(if $(SCALE_CASES),--cases $(SCALE_CASES),) $(if $(filter 1 yes true,$(SCALE_ONE_CORE)),--one-core,)

fuzz: deps
	bash scripts/fuzz.sh

SIMULATION_SEEDS ?= 20000

soak: test-deps
	$(RELEASE_BUILD)
	python3 scripts/soak.py $(SOAK_ARGS)
	python3 scripts/daemon-soak.py $(DAEMON_SOAK_ARGS)
	python3 scripts/hostile-soak.py $(HOSTILE_ARGS)
	$(SWIFT) build --build-tests
	FERRY_SIMULATION_SEEDS=$(SIMULATION_SEEDS) $(SWIFT) test --skip-build --filter SeveralDevicesSimulationTests

hostile: test-deps
	$(RELEASE_BUILD)
	python3 scripts/hostile-soak.py $(HOSTILE_ARGS)

PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
SYSTEMD_USER_DIR ?= $(if $(filter $(HOME)/%,$(PREFIX)),$(HOME)/.config/systemd/user,$(PREFIX)/lib/systemd/user)
INSTALLED := $(BINDIR)/ferry $(DATADIR)/bash-completion/completions/ferry $(DATADIR)/zsh/site-functions/_ferry \
	$(DATADIR)/fish/vendor_completions.d/ferry.fish $(MANDIR)/man1/ferry.1 $(SYSTEMD_USER_DIR)/ferry.service \
	$(DATADIR)/doc/ferry/config.md $(DATADIR)/doc/ferry/daemon.md

# CONFIGURATION=debug installs the debug build (quick, for trying the install itself).
CONFIGURATION ?= release
BUILT := .build/$(CONFIGURATION)/ferry

# install-deps: the build's packages and bash-completion, which loads the completion.
install-deps:
	@bash scripts/bootstrap.sh install

install: install-deps
	$(SWIFT) build -c $(CONFIGURATION) $(if $(filter release,$(CONFIGURATION)),$(STATIC_STDLIB)) --product ferry
	install -Dm755 $(BUILT) $(DESTDIR)$(BINDIR)/ferry
	@mkdir -p .build/completions
	$(BUILT) --generate-completion-script bash > .build/completions/ferry.bash
	$(BUILT) --generate-completion-script zsh > .build/completions/_ferry
	$(BUILT) --generate-completion-script fish > .build/completions/ferry.fish
	install -Dm644 .build/completions/ferry.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/ferry
	install -Dm644 .build/completions/_ferry $(DESTDIR)$(DATADIR)/zsh/site-functions/_ferry
	install -Dm644 .build/completions/ferry.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/ferry.fish
	install -Dm644 contrib/ferry.1 $(DESTDIR)$(MANDIR)/man1/ferry.1
	install -Dm644 docs/config.md $(DESTDIR)$(DATADIR)/doc/ferry/config.md
	install -Dm644 docs/daemon.md $(DESTDIR)$(DATADIR)/doc/ferry/daemon.md
	sed 's|%h/.local/bin/ferry|$(BINDIR)/ferry|; s|%h/.local/share/doc/ferry|$(DATADIR)/doc/ferry|' contrib/ferry.service \
		| install -Dm644 /dev/stdin $(DESTDIR)$(SYSTEMD_USER_DIR)/ferry.service
	@echo "installed ferry into $(BINDIR); man ferry; start the daemon with: systemctl --user daemon-reload && systemctl --user enable --now ferry"
	@$(if $(DESTDIR),true,bash scripts/install-hints.sh "$(BINDIR)" "$(DATADIR)")

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

# A Debian package for machines without Swift (.build/deb/ferry_VERSION_ARCH.deb), and its
# test: installed with apt-get, used, removed (root; .ci/run runs it after make test).
deb: install-deps
	@bash scripts/make-deb.sh

test-package: install-deps
	@bash scripts/test-package.sh

clean:
	rm -rf .build .build-fuzz .ferry
