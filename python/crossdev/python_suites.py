"""The suites defined in Python, from python_suites.json: the one record of each (its modules, its row
keys with their types, choices and defaults, its case ids and expectations) that the C++ engine embeds
too (cmake/CrossdevPythonSuites.cmake -> conformance/suites/python_suite.cpp). Torch-free: the worker's light
`check` path and the row checks import it."""
from __future__ import annotations

import json
from pathlib import Path

_TABLE = json.loads((Path(__file__).resolve().parent / "python_suites.json").read_text(encoding="utf-8"))

SUITES = {s["name"]: s for s in _TABLE["suites"]}


def suite(name: str) -> dict:
    return SUITES[name]


def key(suite_name: str, key_name: str) -> dict:
    """The record of one row key: {key, type, required, to_worker, expected?, choices?, default?}."""
    for k in SUITES[suite_name]["keys"]:
        if k["key"] == key_name:
            return k
    raise KeyError(f"suite '{suite_name}' has no row key '{key_name}'")


def choices(suite_name: str, key_name: str) -> tuple:
    return tuple(key(suite_name, key_name)["choices"])


def default(suite_name: str, key_name: str):
    value = key(suite_name, key_name)["default"]
    return tuple(value) if isinstance(value, list) else value


def run_module(name: str) -> str:
    return SUITES[name]["run_module"]


def check_module(name: str) -> str | None:
    """The lighter module a `check` request imports instead of the run module (no torch, no process
    setup), or None when the check needs the run module."""
    return SUITES[name]["check_module"] or None
