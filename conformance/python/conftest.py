"""pytest driver for crossdev.

Puts the built module on sys.path ($CROSSDEV_BUILD_DIR/python, default build/python) and adds
the runner options:
  --device KIND      run device-specific tests for this device kind (default: every kind the host has)
  --simulate SPEC    simulate kinds the host lacks, e.g. "cuda:2,mps" (default: $CROSSDEV_SIMULATE)
"""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("CROSSDEV_BUILD_DIR", ROOT / "build")).resolve()
sys.path.insert(0, str(BUILD_DIR / "python"))
sys.path.insert(0, str(ROOT))


def pytest_addoption(parser, pluginmanager):
    if pluginmanager.has_plugin("crossdev.pytest_plugin"):
        return  # loaded too: it defines --device and --simulate, with the same meaning
    group = parser.getgroup("crossdev")
    group.addoption("--device", action="append", default=[], help="device kind(s) to run device-specific tests on")
    group.addoption("--simulate", default=os.environ.get("CROSSDEV_SIMULATE", ""),
                    help='simulate device kinds the host lacks, e.g. "cuda:2,mps"')


@pytest.fixture(scope="session")
def crossdev_module():
    import crossdev  # noqa: WPS433  (import after sys.path is set)
    return crossdev


@pytest.fixture(scope="session")
def build_dir():
    return BUILD_DIR


@pytest.fixture(scope="session")
def repo_root():
    return ROOT


@pytest.fixture(scope="session")
def built_library(build_dir):
    """built_library("crossdev_mutants") -> build/lib/libcrossdev_mutants.so. A test-only library
    that was not built fails the test (it is part of `make build`), never skips it."""
    def find(name):
        path = build_dir / "lib" / f"lib{name}.so"
        if not path.exists():
            pytest.fail(f"{path} is missing: build first (make build)")
        return path
    return find


@pytest.fixture(scope="session")
def simulate_spec(request):
    return request.config.getoption("--simulate")


@pytest.fixture(scope="session")
def cli(build_dir):
    """Run build/bin/crossdev; returns CompletedProcess with text output."""
    exe = build_dir / "bin" / "crossdev"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build first (make build)")

    def run(*args, env=None, cwd=ROOT):
        full_env = dict(os.environ)
        full_env.update(env or {})
        return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=full_env,
                              cwd=cwd, timeout=300)
    return run


@pytest.fixture(scope="session", autouse=True)
def sim_registered_before_autograd():
    """The sim backend is registered before any test can start LibTorch's autograd engine: the
    engine sizes its per-device queues once, from the backends registered at that moment (the
    CLI does the same in `crossdev run`)."""
    try:
        import crossdev  # noqa: WPS433
    except ImportError:
        return  # no build: the tests that need it fail with their own message
    crossdev.sim.register()
