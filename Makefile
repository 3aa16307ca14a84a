# crossdev: two commands for a fresh machine (README.md):
#   make report   set up, build, install, run the conformance matrices and benchmarks, write reports/out/
#   make test     set up, build, install, run every GoogleTest (CTest) and pytest suite
#   make test-stress   make test with a CPU hog on every core (ci/stress.sh)
# Other targets are the steps they are made of. `make install` puts the wheel built from $(BUILD) into
# the venv $(VENV) (ci/make_venv.py: it sees the packages, torch included, of $(PYTHON), a venv's too), where pytest and the
# report run: the project's tests run against the installed package, as a user's would.
SHELL := /bin/bash
PYTHON ?= python3
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
REPORT_DIR ?= reports/out
# Accelerator kinds this host lacks run on the sim backend, labelled simulated (real ones win).
SIMULATE ?= $(or $(CROSSDEV_SIMULATE),cuda:2$(comma)mps$(comma)xpu$(comma)xla:1)
comma := ,
VENV ?= $(BUILD)/venv
VENV_PY := $(VENV)/bin/python
# The wheel is built in $(BUILD) itself (scikit-build-core's build-dir), so `make install` after `make build`
# compiles nothing. `make build` (and the wheel) builds CMake's `all`: what make report runs (the engine, its
# libraries, the Python module, the benchmark); `make build-tests` adds the target crossdev_tests (the
# GoogleTest executables, the mutant and fault libraries, the recipes) in the same folder, so `make test`
# after `make report` compiles only the tests, and a second `make test` compiles nothing.
# BUILD_TESTS/BUILD_BENCH=OFF: only what runs the matrices (make xla's build against torch_xla's torch).
BUILD_TESTS ?= ON
BUILD_BENCH ?= ON
PIP_BUILD := -C build-dir=$(BUILD) -C cmake.define.CROSSDEV_BUILD_TESTS=$(BUILD_TESTS) -C cmake.define.CROSSDEV_BUILD_BENCH=$(BUILD_BENCH) \
             -C cmake.define.CROSSDEV_PYTHON_EXECUTABLE=$(PYTHON)

.PHONY: all setup setup-test configure build build-tests install test test-stress ctest pytest report clean help cuda-build-check wheel xla

all: build

help:
	@sed -n '1,7p' Makefile

setup:
	@PYTHON=$(PYTHON) bash ci/setup.sh

# What only crossdev's own tests need (chromium, the test extra's pins), on top of setup.
setup-test:
	@PYTHON=$(PYTHON) bash ci/setup.sh --test

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCROSSDEV_PYTHON_EXECUTABLE=$(PYTHON) \
	  -DCROSSDEV_BUILD_TESTS=$(BUILD_TESTS) -DCROSSDEV_BUILD_BENCH=$(BUILD_BENCH) $(CMAKE_ARGS)

configure: setup $(BUILD)/build.ninja

# On a terminal ninja keeps its progress on one line; elsewhere (a CI log) its "[n/N] Building ..." lines are left
# out and what the compiler says (a warning, an error) is kept, so the log holds what a person can act on.
BUILD_STEP = ci/quiet_build.sh

build: configure
	@bash $(BUILD_STEP) $(BUILD) -j $(JOBS)

# What only make test runs (cmake/CrossdevTesting.cmake: crossdev_tests), and the build tree of the CI
# template's test, $(BUILD)-ci-template (tests/python/packaging/ci_template_tree.py: ccache serves it).
build-tests: build
	@if [[ "$(BUILD_TESTS)" == ON ]]; then bash $(BUILD_STEP) $(BUILD) -j $(JOBS) --target crossdev_tests && \
	  $(PYTHON) tests/python/packaging/ci_template_tree.py $(BUILD); fi

# The wheel, as `pip install --no-build-isolation .` builds it, installed into $(VENV).
# WHEEL=path installs that wheel instead, with the same pip flags, and pip builds nothing: $(BUILD) is not
# reconfigured by $(VENV)'s pip. ci/fresh_report_check.sh passes the wheel `make wheel` built from a build folder
# it reuses, so a venv of another Python (its fresh one) leaves that folder as it was (issue 49).
WHEEL ?=
install: build
	@[[ -x $(VENV_PY) ]] || $(PYTHON) ci/make_venv.py $(VENV)
	@start=$$(date +%s); CMAKE_ARGS="$(CMAKE_ARGS)" $(VENV_PY) -m pip install -q --disable-pip-version-check --no-build-isolation \
	  --no-deps --force-reinstall $(if $(WHEEL),$(WHEEL),$(PIP_BUILD) .) && \
	  echo "install: crossdev into $(VENV)$(if $(WHEEL), from $(WHEEL)) in $$(( $$(date +%s) - start ))s"

# A wheel a runner can cache, built like `pip wheel --no-build-isolation .` into $(WHEEL_DIR) by $(WHEEL_PYTHON)'s
# pip. pip's configure step writes the interpreter running it into $(BUILD)'s cache (Python_EXECUTABLE,
# CMAKE_PREFIX_PATH): WHEEL_PYTHON=$(VENV_PY), the Python `make install` configured $(BUILD) with, keeps that step
# a no-op, and nothing compiles (ci/fresh_report_check.sh).
WHEEL_DIR ?= dist
WHEEL_PYTHON ?= $(PYTHON)
wheel: build
	CMAKE_ARGS="$(CMAKE_ARGS)" $(WHEEL_PYTHON) -m pip wheel --no-build-isolation --no-deps $(PIP_BUILD) -w $(WHEEL_DIR) .

ctest: build-tests
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) 2>&1 | tail -n 40; exit $${PIPESTATUS[0]}

# pytest runs in $(VENV): the installed crossdev, its `crossdev` command and its pytest11 plugin; on
# $(JOBS) xdist workers, a test file per worker (module fixtures such as the downstream build run once).
PYTEST := PATH=$(abspath $(VENV))/bin:$$PATH CROSSDEV_BUILD_DIR=$(abspath $(BUILD)) $(abspath $(VENV_PY)) -m pytest \
          -n $(JOBS) --dist loadfile

pytest: setup-test install build-tests
	$(PYTEST) tests -q -p no:cacheprovider

# Both runners always run; the target fails if either failed, after both closing lines are printed. The
# catalog-wide ctest (label catalog) runs once, inside pytest: test_pytest_plugin_verdicts.py runs the same
# command beside the pytest plugin and gates on it. `make ctest` runs every CTest test.
test: setup-test install build-tests
	@rc=0; \
	echo "== ctest =="; ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE catalog > $(BUILD)/ctest.log 2>&1 || rc=1; \
	grep -E "tests passed|tests failed|Failed|\*\*\*|Total Test time" $(BUILD)/ctest.log | tail -n 60; \
	echo "== pytest =="; $(PYTEST) tests -q -p no:cacheprovider --durations=15 || rc=1; \
	echo "== closing lines =="; grep -E "tests passed|tests failed" $(BUILD)/ctest.log | tail -n 1; \
	exit $$rc

# The whole suite with a CPU hog on every core (ci/stress.sh; STRESS_RUNS=n repeats it).
test-stress:
	@bash ci/stress.sh BUILD=$(BUILD) PYTHON=$(PYTHON) JOBS=$(JOBS)

report: install
	@bash ci/report.sh "$(BUILD)" "$(REPORT_DIR)" "$(abspath $(VENV_PY))" "$(SIMULATE)"

clean:
	rm -rf $(BUILD) $(REPORT_DIR) dist

# The real xla device of torch_xla (PJRT's CPU client on a CPU host): its venv (cached under
# ${XDG_CACHE_HOME:-~/.cache}/crossdev), crossdev built against its torch, the catalog, the OpInfo sweep,
# the models and seed 001's claims on xla, written to reports/xla/ (ci/xla_runner.sh, docs/xla.md).
xla:
	@JOBS=$(JOBS) PYTHON=$(PYTHON) bash ci/xla_runner.sh

# The CUDA flavour, compiled and linked without a GPU, in its own venv and build dir under
# ${XDG_CACHE_HOME:-~/.cache}/crossdev (ci/cuda_build_check.sh). Independent of $(BUILD).
cuda-build-check: setup
	@JOBS=$(JOBS) PYTHON=$(PYTHON) bash ci/cuda_build_check.sh
