# crossdev: two commands for a fresh machine (README.md):
#   make report   set up, build, run the conformance matrices and benchmarks, write reports/out/
#   make test     set up, build, run every GoogleTest (CTest) and pytest suite
#   make test-stress   make test with a CPU hog on every core (ci/stress.sh)
# Other targets are the steps they are made of.
SHELL := /bin/bash
PYTHON ?= python3
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
REPORT_DIR ?= reports/out
# Accelerator kinds this host lacks run on the sim backend, labelled simulated (real ones win).
SIMULATE ?= $(or $(CROSSDEV_SIMULATE),cuda:2$(comma)mps$(comma)xpu$(comma)xla:1)
comma := ,

.PHONY: all setup configure build test test-stress ctest pytest report clean help cuda-build-check

all: build

help:
	@sed -n '1,5p' Makefile

setup:
	@bash ci/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCROSSDEV_PYTHON_EXECUTABLE=$(PYTHON) $(CMAKE_ARGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

ctest: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) 2>&1 | tail -n 40; exit $${PIPESTATUS[0]}

pytest: build
	CROSSDEV_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) -m pytest conformance -q -p no:cacheprovider

# Both runners always run; the target fails if either failed, after both closing lines are printed.
test: build
	@rc=0; \
	echo "== ctest =="; ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) > $(BUILD)/ctest.log 2>&1 || rc=1; \
	grep -E "tests passed|tests failed|Failed|\*\*\*|Total Test time" $(BUILD)/ctest.log | tail -n 60; \
	echo "== pytest =="; CROSSDEV_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) -m pytest conformance -q -p no:cacheprovider --durations=15 || rc=1; \
	echo "== closing lines =="; grep -E "tests passed|tests failed" $(BUILD)/ctest.log | tail -n 1; \
	exit $$rc

# The whole suite with a CPU hog on every core (ci/stress.sh; STRESS_RUNS=n repeats it).
test-stress:
	@bash ci/stress.sh BUILD=$(BUILD) PYTHON=$(PYTHON) JOBS=$(JOBS)

report: build
	@bash ci/report.sh "$(BUILD)" "$(REPORT_DIR)" "$(PYTHON)" "$(SIMULATE)"

clean:
	rm -rf $(BUILD) $(REPORT_DIR)

# The CUDA flavour, compiled and linked without a GPU, in its own venv and build dir under
# ${XDG_CACHE_HOME:-~/.cache}/crossdev (ci/cuda_build_check.sh). Independent of $(BUILD).
cuda-build-check: setup
	@JOBS=$(JOBS) PYTHON=$(PYTHON) bash ci/cuda_build_check.sh
