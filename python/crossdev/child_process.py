"""The one way crossdev's Python starts a child process, and the child's side of the bond: the Python half of
conformance/runner/child_process.h (docs/ARCHITECTURE.md, "Add a child process").

- One variable, CROSSDEV_PARENT_PID, names the process that started a child. It is set in the child's
  environment only (`environment`), never in this process's: crossdev changes nothing in a user's process.
- The child's first act is `die_with_parent()`: SIGKILL when its parent dies, and exit at once if the
  parent is already gone.
- A child reports as every worker does (docs/python-worker.md): events, one JSON object per line,
  {"event": name, ...} (`event_line`, `read_events`).
- `run` is a one-shot child with a timeout, in its own session so that a timeout kills what it started too;
  `start` is a long-lived one (the capability workers), whose events an `EventStream` reads one at a time
  with a timeout (the twin of conformance/runner/event_stream.h) and which `stop` ends.
- How a child ended is worded once, as the engine words it: `describe_exit`.

Its users: the pytest plugin's picker check (crossdev.picker_check), the library check
(crossdev.libraries), the runtime probe (crossdev.runtimes) and the CPU-capability workers
(crossdev.opinfo.cpu_capability).
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass

PARENT_PID_VARIABLE = "CROSSDEV_PARENT_PID"  # runner/child_process.h kParentPidVariable
_PR_SET_PDEATHSIG = 1


def environment(base: dict | None = None, **set_vars: str) -> dict:
    """`base` (this process's environment by default) with `set_vars` and CROSSDEV_PARENT_PID=<our pid>."""
    env = dict(os.environ if base is None else base)
    env.update(set_vars)
    env[PARENT_PID_VARIABLE] = str(os.getpid())
    return env


def die_with_parent(exit_code: int = 2) -> None:
    """In a child: SIGKILL when the parent dies (Linux's PR_SET_PDEATHSIG), and exit at once with `exit_code`
    when the parent named by CROSSDEV_PARENT_PID is already gone (it died between the spawn and this call)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    parent = os.environ.get(PARENT_PID_VARIABLE)
    if parent and str(os.getppid()) != parent:
        os._exit(exit_code)


def event_line(event: str, **fields) -> str:
    """One event, as runner/worker_events.h reads it (Python's json dialect: a NaN stays NaN)."""
    return json.dumps({"event": event, **fields}, separators=(",", ":"))


def read_events(text: str) -> list[dict]:
    """The events among `text`'s lines; any other line (what a library or a picker printed) is not one."""
    events = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("event"), str):
            events.append(value)
    return events


@dataclass
class Finished:
    returncode: int | None  # None after a timeout
    stdout: str
    stderr: str
    timed_out: bool


def start(argv: list[str], *, env: dict | None = None, **popen) -> subprocess.Popen:
    """A long-lived child with CROSSDEV_PARENT_PID in its environment (`env`: its base, ours by default)."""
    return subprocess.Popen(argv, env=environment(env), **popen)


def run(argv: list[str], *, timeout: float, env: dict | None = None, merge_stderr: bool = False) -> Finished:
    """A one-shot child: stdin /dev/null, its output collected, in its own session; after `timeout` seconds the
    whole session is killed (what it started too) and what it had written is kept. OSError when it cannot start."""
    proc = start(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        timed_out = True
    decode = lambda b: (b or b"").decode(errors="replace")  # noqa: E731
    return Finished(None if timed_out else proc.returncode, decode(out), decode(err), timed_out)


class EventStream:
    """The one way crossdev's Python waits on a long-lived child: the events it writes to a pipe (`start`'s
    stdout=PIPE), read one at a time, as conformance/runner/event_stream.h reads them. Each `next` ends with the
    next event, the end of the child's output (None, `ended` set: it exited) or a timeout (None). A line that is
    no event is skipped, never taken for an answer."""

    def __init__(self, pipe):
        self._fd = pipe.fileno()  # read here, never through the pipe's own buffer
        self._buffer = b""
        self.ended = False
        self.last_line = ""  # the text of the last line read; "" once the output has ended

    def next(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                self.last_line = line.decode(errors="replace").strip()
                events = read_events(self.last_line)
                if events:
                    return events[0]
            if self.ended:
                self.last_line = ""
                return None
            ready, _, _ = select.select([self._fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                return None
            chunk = os.read(self._fd, 65536)
            if chunk:
                self._buffer += chunk
            else:
                self.ended = True
                if self._buffer:
                    self._buffer += b"\n"  # a last line without its newline


def stop(proc: subprocess.Popen) -> int:
    """Ends a `start`ed child: SIGKILL if it still runs, then its exit status (Popen's returncode)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    return proc.wait()


def describe_exit(returncode: int | None) -> str:
    """How a child ended, as the engine words it: "was killed by signal 11 (SIGSEGV)", "exited with status 2";
    "ended" when it is not known (None: the child was not reaped)."""
    if returncode is None:
        return "ended"
    if returncode < 0:
        try:
            name = f" ({signal.Signals(-returncode).name})"
        except ValueError:
            name = ""
        return f"was killed by signal {-returncode}{name}"
    return f"exited with status {returncode}"
