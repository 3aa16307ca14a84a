"""Runs `python -m pytest ...` with crossdev's plugin in a subprocess, as a user would, for the
plugin's tests (test_pytest_plugin*.py). Where crossdev is installed, the plugin is its `pytest11`
entry point, named after its module, so `-p crossdev.pytest_plugin` is a no-op there (and loads it
where autoloading is off); in a build tree without the package, the same `-p` loads the module from
build/python."""
import functools
import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("CROSSDEV_BUILD_DIR", ROOT / "build")).resolve()
PICKERS = pathlib.Path(__file__).resolve().parent / "pickers"


def make_report_simulate():
    """`make report`'s default SIMULATE, read from the Makefile (its one definition)."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(r"^SIMULATE \?= \$\(or \$\(CROSSDEV_SIMULATE\),(.*)\)$", text, re.M)
    assert m, "Makefile: SIMULATE default not found"
    return m.group(1).replace("$(comma)", ",")


@functools.lru_cache(maxsize=None)
def entry_point_installed():
    """Whether crossdev's pytest11 entry point is installed (the wheel), for this python."""
    return any(ep.name == "crossdev.pytest_plugin" and ep.value.startswith("crossdev.pytest_plugin")
               for ep in importlib.metadata.entry_points(group="pytest11"))


def plugin_args():
    """How a pytest command line loads crossdev's plugin here."""
    return ["-p", "crossdev.pytest_plugin"]


def pytest_env(env=None, extra_path=()):
    full_env = dict(os.environ)
    full_env.pop("CROSSDEV_SIMULATE", None)
    full_env.pop("PYTEST_ADDOPTS", None)
    # The installed package is the one under test; a build tree without it puts build/python first.
    paths = ([] if entry_point_installed() else [str(BUILD_DIR / "python")]) + [str(p) for p in extra_path]
    paths += [p for p in full_env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in paths]
    if paths:
        full_env["PYTHONPATH"] = os.pathsep.join(paths)
    else:
        full_env.pop("PYTHONPATH", None)
    full_env.update(env or {})
    return full_env


def run_pytest(*args, cache=False, env=None, cwd=ROOT, timeout=900, extra_path=()):
    """pytest in a subprocess, with crossdev's plugin loaded (used or not, as the arguments say)."""
    full_env = pytest_env(env, extra_path)
    cmd = [sys.executable, "-m", "pytest", *plugin_args(), "--rootdir", str(cwd)]
    if not cache:
        cmd += ["-p", "no:cacheprovider"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout)


def collected_ids(result):
    """Node ids printed by `--collect-only -q`, as (file part, item name)."""
    out = []
    for line in result.stdout.splitlines():
        if "::" in line and not line.startswith(" "):
            path, _, name = line.partition("::")
            out.append((path, name))
    return out


def junit_cases(path):
    """[(classname, name, outcome)] from a JUnit file; outcome is passed/failure/error/skipped."""
    out = []
    for tc in ET.parse(path).getroot().iter("testcase"):
        outcome = "passed"
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                outcome = child.tag
        out.append((tc.get("classname"), tc.get("name"), outcome))
    return out
