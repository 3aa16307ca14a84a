"""A case's statuses and executions, from case_statuses.json: the one table that the C++ engine's enums are
generated from too (cmake/CrossdevCaseStatuses.cmake). Names cross every process boundary; no ordinals."""
import json
from pathlib import Path

_TABLE = json.loads((Path(__file__).resolve().parent / "case_statuses.json").read_text(encoding="utf-8"))

STATUSES = tuple(s["name"] for s in _TABLE["statuses"])
GATING_STATUSES = tuple(s["name"] for s in _TABLE["statuses"] if s["gates"])  # an xfail does not gate
FAILED_STATUSES = tuple(s for s in GATING_STATUSES if s != "xpass")  # it ran and went wrong: fail, error, crash
JUNIT_ELEMENT = {s["name"]: s["junit"] or None for s in _TABLE["statuses"]}  # None: a pass writes no element
STATUS_RANK = {s["name"]: s["rank"] for s in _TABLE["statuses"]}
STATUS_MEANING = {s["name"]: s["meaning"] for s in _TABLE["statuses"]}
EXPECTATION_STATUSES = tuple(s["name"] for s in _TABLE["statuses"] if s["expectation"])  # what an entry may give
EXECUTIONS = tuple(e["name"] for e in _TABLE["executions"])
