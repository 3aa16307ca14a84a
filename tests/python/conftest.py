"""pytest driver for crossdev.

The tests run against the INSTALLED crossdev (`make test` installs the wheel into a venv and runs
pytest with it), so a file missing from the wheel fails a test. Without an installed crossdev (a
developer's `PYTHONPATH`-less run from a build tree), the build's mirror $CROSSDEV_BUILD_DIR/python
(default build/python) is used. Test-only libraries and binaries are read from the build tree.
"""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("CROSSDEV_BUILD_DIR", ROOT / "build")).resolve()
INSTALLED = importlib.util.find_spec("crossdev") is not None
if not INSTALLED:
    sys.path.insert(0, str(BUILD_DIR / "python"))
sys.path.insert(0, str(ROOT))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "schedule_first: a file that takes a minute or more (whole catalogs, fuzzing): collected first, so "
                   "`make test`'s xdist workers (--dist loadfile) start it at once and finish together")


def pytest_collection_modifyitems(config, items):
    """The files marked schedule_first come first, the rest in their order: xdist's loadfile scheduling hands
    out files in collection order, and a long file handed out last runs alone at the end of the run."""
    items.sort(key=lambda item: item.get_closest_marker("schedule_first") is None)  # a stable sort


def pytest_report_header(config):
    spec = importlib.util.find_spec("crossdev")
    where = pathlib.Path(spec.origin).parent if spec and spec.origin else "(not importable)"
    return f"crossdev under test: {where}"


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
    that was not built fails the test (it is part of `make build-tests`), never skips it."""
    def find(name):
        path = build_dir / "lib" / f"lib{name}.so"
        if not path.exists():
            pytest.fail(f"{path} is missing: build the tests first (make build-tests)")
        return path
    return find


@pytest.fixture(scope="session")
def simulate_spec(request):
    """crossdev's plugin's --crossdev-simulate (its entry point loads it), else $CROSSDEV_SIMULATE."""
    given = request.config.getoption("--crossdev-simulate", default=None)
    return given if given is not None else os.environ.get("CROSSDEV_SIMULATE", "")


def crossdev_command():
    """The installed `crossdev` console script (next to this Python), else `python -m crossdev`."""
    script = pathlib.Path(sys.executable).parent / "crossdev"
    return [str(script)] if script.exists() else [sys.executable, "-m", "crossdev"]


@pytest.fixture(scope="session")
def cli():
    """Run the `crossdev` command; returns CompletedProcess with text output."""
    command = crossdev_command()

    def run(*args, env=None, cwd=ROOT):
        full_env = dict(os.environ)
        if not INSTALLED:  # `python -m crossdev` from the build tree's mirror
            full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"), full_env.get("PYTHONPATH")]))
        full_env.update(env or {})
        return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, env=full_env,
                              cwd=cwd, timeout=300)
    return run


def real_accelerator():
    """The accelerator this host really has ("" if none), asked before sim is registered (after it,
    torch.accelerator would name sim)."""
    import torch  # noqa: WPS433
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "is_available"):
        return accelerator.current_accelerator().type if accelerator.is_available() else ""
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    return "mps" if mps is not None and mps.is_available() else ""


REAL_ACCELERATOR = real_accelerator()
# Why sim stays out of a process that has a real accelerator: conformance/runner/run_context.cpp
# (LibTorch's autograd engine would take sim for the accelerator and break backward on the real one).
SIM_SKIP_REASON = (f"the sim backend is not registered: this host has a real {REAL_ACCELERATOR}, and sim beside it "
                   f"would break backward on the real device (conformance/runner/run_context.cpp)")
requires_sim = pytest.mark.skipif(bool(REAL_ACCELERATOR), reason=SIM_SKIP_REASON)


def register_sim_where_allowed(crossdev_module):
    """The sim backend with its plain profile, registered unless this host has a real accelerator (sim
    beside it would break backward on the real device: SIM_SKIP_REASON; the process is the xdist worker's,
    so a registration would reach every file the worker runs after). For the module fixtures of files whose
    cases run on cpu, sim and cuda alike; test_sim_registration_sites.py keeps other registrations out."""
    if not REAL_ACCELERATOR:
        crossdev_module.sim.register()
    crossdev_module.sim.set_profile("plain")


def _names_sim(value):
    return isinstance(value, str) and (value == "sim" or value.startswith("sim:"))


def pytest_runtest_setup(item):
    """A case parametrized with the sim device skips where sim cannot be registered (a GPU host)."""
    if not REAL_ACCELERATOR:
        return
    params = getattr(getattr(item, "callspec", None), "params", {})
    for value in params.values():
        if _names_sim(value) or (isinstance(value, (tuple, list)) and any(_names_sim(v) for v in value)):
            pytest.skip(SIM_SKIP_REASON)


@pytest.fixture(scope="session", autouse=True)
def sim_registered_before_autograd():
    """The sim backend is registered before any test can start LibTorch's autograd engine: the
    engine sizes its per-device queues once, from the backends registered at that moment (the
    CLI does the same in `crossdev run`). Not on a host with a real accelerator (REAL_ACCELERATOR)."""
    try:
        import crossdev  # noqa: WPS433
    except ImportError:
        return  # no build: the tests that need it fail with their own message
    if not REAL_ACCELERATOR:
        crossdev.sim.register()
