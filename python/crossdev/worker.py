"""`python -m crossdev.worker`: the engine's Python worker, for the rows of suites defined in Python
(opinfo, models, claims) and the probe of Python device runtimes. The protocol, JSON request lines in
(one per request, served in turn until stdin closes) and one record per line out
(PLAN/START/CASE/ITEM/BAD/RUNTIME/FATAL, each answer ending with DONE), is docs/python-worker.md.
Everything a user's op prints on stdout goes to stderr, so it cannot corrupt the protocol.
"""
from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import sys
import traceback

from crossdev import python_suites
from crossdev import runtimes as runtimes_table
from crossdev.case_statuses import EXECUTIONS, STATUSES

# Suites defined in Python: their records in python_suites.json, each naming its run module (check(request,
# out), run(request, out), and plan_cases(request, out) when planned_by is worker) and, where its `check` lives
# in a lighter module that imports no torch, its check module: a check request imports only that, and sets
# up no simulated backend (it runs no case). The engine sends the module and `set_up` with each request
# (its own record of the suite); a request without them is looked up here.
SUITES = python_suites.SUITES



class Protocol:
    """The worker's side of the stream: one flushed line per record."""

    def __init__(self, stream):
        self._stream = stream

    def line(self, text: str) -> None:
        self._stream.write(text + "\n")
        self._stream.flush()

    def plan(self, n: int) -> None:
        self.line(f"PLAN {n}")

    def start(self, index: int, case_id: str) -> None:
        self.line(f"START {index}\t{_escape(case_id)}")

    def item(self, index: int, case_id: str, device_kind: str) -> None:
        self.line(f"ITEM {index}\t{_escape(case_id)}\t{_escape(device_kind)}")

    def bad(self, row: int, key: str, message: str) -> None:
        self.line(f"BAD {row}\t{_escape(key)}\t{_escape(message)}")

    def fatal(self, message: str) -> None:
        self.line("FATAL " + _escape(message))

    def done(self) -> None:
        self.line("DONE")

    def case(self, case: dict) -> None:
        self.line(encode_case(case))


_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\x1f": "\\u", "\x1e": "\\v"})


def _escape(text: str) -> str:
    return str(text).translate(_ESCAPES)


def encode_case(case: dict) -> str:
    """The engine's case record (runner/case_codec.cpp encode_case): CASE and 14 tab-separated fields, and a
    15th with the case's `data` when it has any; status and execution by name (case_statuses.json).
    The row's bookkeeping fields (row id, suite, source, intent, file, line) are left empty: the engine
    fills them from the row it handed over."""
    if case["status"] not in STATUSES or case.get("execution", "real") not in EXECUTIONS:
        raise ValueError(f"case {case['id']}: status {case['status']!r} / execution {case.get('execution')!r} "
                         f"is not one of case_statuses.json's {STATUSES} / {EXECUTIONS}")
    metrics = "\x1f".join(f"{_escape(k)}\x1e{float(v)!r}" for k, v in case.get("metrics", {}).items())
    details = "\x1f".join(f"{_escape(k)}\x1e{_escape(v)}" for k, v in case.get("details", {}).items())
    fields = [case["id"], "", "", "", "", "", "0", case["status"], case.get("device", ""),
              case.get("execution", "real"), case.get("message", ""),
              f"{float(case.get('duration_s', 0.0)):.9g}"]
    line = "CASE\t" + "\t".join(_escape(f) for f in fields) + "\t" + metrics + "\t" + details
    if case.get("data"):  # structured results (a JSON object), written verbatim as the bundle case's `data`
        line += "\t" + _escape(json.dumps(case["data"], allow_nan=False, separators=(",", ":")))
    return line


def _die_with_parent() -> None:
    """Linux: SIGKILL when the engine that started us dies (as `crossdev run --worker` does)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    parent = os.environ.get("CROSSDEV_PARENT_PID")  # the engine's one variable (runner/child_process.h)
    if parent and str(os.getppid()) != parent:
        os._exit(2)


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
    """The engine's probe of the Python runtimes (runner/python_runtimes.cpp): one RUNTIME line each."""
    for report in runtimes_table.probe():
        fields = ["RUNTIME", report["kind"], report["status"], str(report["count"]), report.get("summary", ""),
                  report.get("reason", "")]
        out.line("\t".join(_escape(f) for f in fields))


def serve(request: dict, out: Protocol) -> None:
    """Answers one request; every answer, a FATAL one too, ends with DONE."""
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
    the worker ends it (exit 2) after its FATAL: what it had set up can no longer be trusted."""
    _die_with_parent()
    out = Protocol(_protocol_stream())
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
