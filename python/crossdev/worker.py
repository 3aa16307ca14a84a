"""`python -m crossdev.worker`: the engine's Python worker, for the rows of suites defined in Python
(opinfo, models, claims) and the probe of Python device runtimes. The protocol, JSON request lines in
(one per request, served in turn until stdin closes) and one event per line out, a JSON object
(plan/start/case/item/bad/runtime/fatal, each answer ending with done), is docs/python-worker.md.
Everything a user's op prints on stdout goes to stderr, so it cannot corrupt the protocol.
"""
from __future__ import annotations

import collections
import importlib
import json
import os
import sys
import traceback
import warnings

from crossdev import child_process, python_suites
from crossdev import runtimes as runtimes_table
from crossdev.case_statuses import EXECUTIONS, STATUSES

# Suites defined in Python: their records in python_suites.json, each naming its run module (check(request,
# out), run(request, out), and plan_cases(request, out) when planned_by is worker) and, where its `check` lives
# in a lighter module that imports no torch, its check module: a check request imports only that, and sets
# up no simulated backend (it runs no case). The engine sends the module and `set_up` with each request
# (its own record of the suite); a request without them is looked up here.
SUITES = python_suites.SUITES



class CaseWarnings:
    """Python warnings raised while a case runs (op_db's deprecations, torch's: a TORCH_WARN raised under
    Python reaches it as a UserWarning) go into that case's record, not onto the console: details.warnings,
    one line per distinct text, "<count>x <Category>: <text>", in the order first seen. Each occurrence is
    counted (an `always` filter after every other, so a filter that ignores a warning still does). Outside a
    case a warning is shown as Python shows it."""

    def __init__(self):
        self._counts = None  # a Counter while a case runs
        self._show = warnings.showwarning

    def install(self) -> None:
        warnings.filterwarnings("always", append=True)
        warnings.showwarning = self._record

    def _record(self, message, category, filename, lineno, file=None, line=None):
        if self._counts is None:
            return self._show(message, category, filename, lineno, file, line)
        self._counts[f"{category.__name__}: {message}"] += 1
        return None

    def begin(self) -> None:
        self._counts = collections.Counter()

    def end(self, case: dict) -> None:
        counts, self._counts = self._counts, None
        if counts:
            details = case.setdefault("details", {})
            details["warnings"] = "\n".join(f"{n}x {text}" for text, n in counts.items())


class Protocol:
    """The worker's side of the stream: one event per line, a JSON object {"event": name, **fields}
    (runner/worker_events.h reads them), flushed at once so the engine knows which case is running.
    Between a case's start and its record, warnings are collected into the record (CaseWarnings)."""

    def __init__(self, stream, case_warnings: CaseWarnings | None = None):
        self._stream = stream
        self._warnings = case_warnings

    def send(self, event: str, **fields) -> None:
        self._stream.write(child_process.event_line(event, **fields) + "\n")
        self._stream.flush()

    def plan(self, n: int) -> None:
        self.send("plan", count=n)

    def start(self, index: int, case_id: str) -> None:
        self.send("start", index=index, id=str(case_id))
        if self._warnings is not None:
            self._warnings.begin()

    def item(self, index: int, case_id: str, device_kind: str) -> None:
        self.send("item", index=index, id=str(case_id), device_kind=str(device_kind))

    def bad(self, row: int, key: str, message: str) -> None:
        self.send("bad", row=row, key=str(key), message=str(message))

    def fatal(self, message: str) -> None:
        self.send("fatal", message=str(message))

    def done(self) -> None:
        self.send("done")

    def case(self, case: dict) -> None:
        if self._warnings is not None:
            self._warnings.end(case)
        self._stream.write(encode_case(case) + "\n")
        self._stream.flush()


def encode_case(case: dict) -> str:
    """The `case` event of one result (runner/worker_events.cpp case_from reads it): status and execution by
    name (case_statuses.json), metrics as numbers (NaN too), details as strings, and the case's `data` (a JSON
    object, written verbatim as the bundle case's `data`) when it has any. The row's bookkeeping (row id,
    suite, source, intent, file, line) is left out: the engine fills it from the row it handed over."""
    execution = case.get("execution", "real")
    if case["status"] not in STATUSES or execution not in EXECUTIONS:
        raise ValueError(f"case {case['id']}: status {case['status']!r} / execution {case.get('execution')!r} "
                         f"is not one of case_statuses.json's {STATUSES} / {EXECUTIONS}")
    event = {"event": "case", "id": str(case["id"]), "status": case["status"], "device": str(case.get("device", "")),
             "execution": execution, "message": str(case.get("message", "")),
             "duration_s": float(f"{float(case.get('duration_s', 0.0)):.9g}"),
             "metrics": {str(k): float(v) for k, v in case.get("metrics", {}).items()},
             "details": {str(k): str(v) for k, v in case.get("details", {}).items()}}
    if case.get("data"):
        json.dumps(case["data"], allow_nan=False)  # the bundle is strict JSON: a NaN inside `data` is a bug, here
        event["data"] = case["data"]
    return child_process.event_line(**event)


def _protocol_stream():
    """A private copy of stdout for the protocol; fd 1 then points at stderr."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1)


_prepared = {"runtimes": set(), "sim": False, "libraries": []}  # what this process has set up so far


def prepare_process(request: dict) -> str | None:
    """Prepare this process as the engine's is, before any suite code runs (runner/python_worker.h
    write_process_setup): the sim backend when a kind is simulated (before anything starts the
    autograd engine), then `libraries` (--load-library), in order, with torch.ops.load_library, so
    a user's kernels registered for a device are the ones judged. A worker serves many requests of one
    engine: what an earlier request set up is not set up again. Returns why it failed, or None."""
    libraries = [path for path in request.get("libraries", []) if path not in _prepared["libraries"]]
    runtimes = [k for k in request.get("runtimes", [])
                if request.get("kinds", {}).get(k) == "real" and k not in _prepared["runtimes"]]
    simulate = bool(request.get("simulated_kinds")) and not _prepared["sim"]
    if not simulate and not libraries and not runtimes:
        return None
    import torch

    for kind in runtimes:  # a real kind whose runtime is a Python package (crossdev/runtimes.py): torch_xla
        try:
            runtimes_table.load(kind)
        except Exception as e:  # noqa: BLE001  the probe found it working; say what changed
            return f"cannot import the runtime of the real '{kind}' device: {type(e).__name__}: {e}"
        _prepared["runtimes"].add(kind)

    if simulate:
        import crossdev
        crossdev.sim.register()
        _prepared["sim"] = True
    for path in libraries:
        try:
            torch.ops.load_library(path)
        except (OSError, RuntimeError) as e:
            message = " ".join(str(e).split("Exception raised from")[0].split())
            return f"cannot load '{path}' (--load-library): {message}"
        _prepared["libraries"].append(path)
    return None


def serve_runtimes(out: Protocol) -> None:
    """The engine's probe of the Python runtimes (runner/python_runtimes.cpp): one `runtime` event each."""
    for report in runtimes_table.probe():
        out.send("runtime", kind=report["kind"], status=report["status"], count=int(report["count"]),
                 summary=report.get("summary", ""), reason=report.get("reason", ""))


def serve(request: dict, out: Protocol) -> None:
    """Answers one request; every answer, a fatal one too, ends with done."""
    if request.get("request") == "runtimes":
        serve_runtimes(out)
        return
    name = request.get("suite")
    kind = request.get("request")
    # The engine names the module and whether to set the process up (its record of the suite); a request
    # without them (a test's, by hand) takes both from python_suites.json.
    if "module" not in request and name not in SUITES:
        out.fatal(f"unknown Python suite '{name}'; expected one of {', '.join(sorted(SUITES))}")
        return
    light_check = kind == "check" and python_suites.check_module(name) is not None if name in SUITES else False
    module = request.get("module") or (python_suites.check_module(name) if light_check else python_suites.run_module(name))
    set_up = request.get("set_up", not light_check)
    problem = prepare_process(request if set_up else {**request, "simulated_kinds": []})
    if problem:
        out.fatal(problem)
        return
    try:
        suite = importlib.import_module(module)
    except ImportError as e:
        out.fatal(f"suite '{name}': cannot import its module '{module}': {type(e).__name__}: {e}")
        return
    if kind == "check":
        suite.check(request, out)
    elif kind == "run":
        suite.run(request, out)
    elif kind == "plan":
        if not hasattr(suite, "plan_cases"):  # the engine plans it (python_suites.json planned_by device_kinds)
            out.fatal(f"suite '{name}' is planned by the engine, not by the worker")
            return
        suite.plan_cases(request, out)
    else:
        out.fatal(f"unknown request '{kind}'; expected one of check, plan, run")


def main() -> int:
    """Serves the engine's requests, one JSON object per line, until stdin closes (exit 0). A bug in
    the worker ends it (exit 2) after its fatal event: what it had set up can no longer be trusted."""
    child_process.die_with_parent()  # the engine's CROSSDEV_PARENT_PID (runner/child_process.h)
    case_warnings = CaseWarnings()
    case_warnings.install()
    out = Protocol(_protocol_stream(), case_warnings)
    served = 0
    for line in iter(sys.stdin.readline, ""):
        if not line.strip():
            continue
        served += 1
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            out.fatal(f"the request is not JSON: {e}")
            out.done()
            continue
        try:
            serve(request, out)
        except Exception as e:  # noqa: BLE001  a bug in the worker: the engine reports it, never a silent pass
            out.fatal(f"internal error in crossdev.worker: {type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}")
            return 2
        out.done()
    if not served:
        out.fatal("no request on stdin (expected one JSON object on one line)")
        return 2
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Every record is out: skip the interpreter's teardown. A process whose backward ran on sim can
    # abort there ("terminate called without an active exception"): the autograd device thread drops
    # the last reference to the graph task, whose saved thread-local state holds a Python object, while
    # the interpreter finalizes (docs/sim-backend.md, "At interpreter exit").
    os._exit(code)
