"""Runs `python -m pytest -p crossdev.pytest_plugin ...` in a subprocess, as a user would, for
the plugin's tests (test_pytest_plugin*.py)."""
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


def run_pytest(*args, cache=False, env=None, cwd=ROOT, timeout=900, extra_path=()):
    full_env = dict(os.environ)
    full_env.pop("CROSSDEV_SIMULATE", None)
    full_env.pop("PYTEST_ADDOPTS", None)
    full_env["PYTHONPATH"] = os.pathsep.join([str(BUILD_DIR / "python"), *map(str, extra_path)])
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "pytest", "-p", "crossdev.pytest_plugin", "--rootdir", str(cwd)]
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
