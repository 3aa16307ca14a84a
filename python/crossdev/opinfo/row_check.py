"""The worker's `check` request for `suite: opinfo` rows (runner/suite.h check_rows): is each row valid
for the installed torch (its globs select OpInfos, its dtypes, checks, variants, tolerance and axis keys
are known)? It imports no torch while op_db's names are cached (op_names.py), so an engine run pays one
torch import (its run worker's), not two; python/crossdev/worker.py sends `check` requests here."""
from __future__ import annotations

from crossdev import dtypes, numerics, python_suites

from . import cpu_capability, cross_machine, op_names, row_tolerance, selection

# The row keys' choices and defaults: the suite's record in python_suites.json (the engine's too).
CHECKS = python_suites.choices("opinfo", "checks")
VARIANTS = python_suites.choices("opinfo", "variants")  # the OpInfo's forms; compile: torch.compile vs eager
DEFAULT_CHECKS = python_suites.default("opinfo", "checks")
DEFAULT_VARIANTS = python_suites.default("opinfo", "variants")
DEFAULT_MAX_SAMPLES = python_suites.default("opinfo", "max_samples")


def max_samples(row) -> int:
    """At most this many of op_db's samples per case: the row's `max_samples`, else DEFAULT_MAX_SAMPLES."""
    return row.get("max_samples", DEFAULT_MAX_SAMPLES)


DTYPE_NAMES = dtypes.NAMES  # crossdev/dtypes.json, the engine's table too

def _op_db_or_fatal(out):
    try:
        op_db = selection.load_op_db()
    except ImportError as e:
        out.fatal(str(e))
        return None
    op_names.store([selection.full_name(op) for op in op_db])  # the next check need not import op_db
    return op_db


def check(request, out) -> None:
    capability_problems = [(i, key, message) for i, row in enumerate(request["rows"])
                           for key, message in cpu_capability.row_problems(row) + cross_machine.row_problems(row)]
    capability_problems += [(i, cross_machine.KEY, problem) for i, row in enumerate(request["rows"])
                            for problem in [cross_machine.replay_problem(row)] if problem]
    for i, key, message in capability_problems:
        out.bad(i, key, message)
    if capability_problems:  # bad input already: no need to import op_db (seconds) to say so
        return
    names = op_names.cached() or _op_db_or_fatal(out)  # the names only: op_db when they are not cached
    if names is None:
        return
    for i, row in enumerate(request["rows"]):
        problem = selection.selection_problem(names, row.get("opinfo"), row.get("exclude", []))
        if problem:
            out.bad(i, "opinfo", problem)
        for key, valid in (("dtypes", DTYPE_NAMES), ("checks", CHECKS), ("variants", VARIANTS)):
            for value in row.get(key, []):
                if value not in valid:
                    out.bad(i, key, f"unknown {key[:-1]} '{value}'; expected one of {', '.join(valid)}")
        for problem in row_tolerance.problems(row, DTYPE_NAMES):
            out.bad(i, "tolerance", problem)
        if "numerics" in row and numerics.check_mode(row["numerics"]):
            out.bad(i, "numerics", numerics.check_mode(row["numerics"]))
