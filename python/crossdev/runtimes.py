"""Device kinds whose runtime is a Python package: torch_xla gives a real `xla` device, on any Linux
CPU host through PJRT's CPU client, but only in a process that imports it.

One record per runtime (RUNTIMES). `probe()` says, for each, whether this environment has a real
device of that kind, and why not; it imports the runtime only in a child process, so the caller's
process is left as it was (a Python worker imports it with `load()` when a case runs there).

    python -m crossdev.runtimes        one JSON object per runtime on stdout (what the engine reads)

Exit codes: 0 always once the report is written (an absent or broken runtime is a report, not an error).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from importlib import metadata

from crossdev import child_process

PROBE_TIMEOUT_S = 300  # PJRT's client starts in ~5 s on 2 cores; a runtime that hangs is reported absent


@dataclass(frozen=True)
class PythonRuntime:
    kind: str           # crossdev's device kind (impl/device/device_kind.cpp)
    module: str         # the import that registers the device with torch
    distribution: str   # its name on PyPI, for versions
    platform_env: str   # the variable that chooses its platform
    platform_notes: tuple  # (platform, what the device really is), for the bundle and `crossdev devices`
    # Called right after the import, before any case: starts the runtime so that its devices are counted
    # before LibTorch's autograd engine sizes its per-device queues (at the first backward of the process,
    # the CPU golden's included). torch_xla counts 0 devices until its PJRT client starts, and a later
    # backward on xla:0 then fails "device_ready_queues_ ... INTERNAL ASSERT FAILED" (seen with 2.9.0).
    start: str = ""


RUNTIMES = (
    PythonRuntime(
        kind="xla", module="torch_xla", distribution="torch-xla", platform_env="PJRT_DEVICE",
        platform_notes=(
            ("CPU", "PJRT's CPU client: XLA's graph capture, compiler and runtime on the host CPU, not a TPU"),
            ("TPU", "a TPU through PJRT"),
            ("CUDA", "a GPU through PJRT's CUDA client"),
        ),
        start="runtime.global_runtime_device_count"),
)
BY_KIND = {r.kind: r for r in RUNTIMES}


def _release(version: str) -> str:
    """'2.9.0+cu128' -> '2.9'."""
    return ".".join(version.split("+")[0].split(".")[:2])


def _installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _absent(runtime: PythonRuntime, reason: str, **versions) -> dict:
    return {"kind": runtime.kind, "status": "absent", "count": 0, "reason": reason, "summary": "", **versions}


def probe_here(runtime: PythonRuntime) -> dict:
    """The probe itself: imports the runtime into *this* process (call it in a child: `probe()`)."""
    torch_version = _installed("torch") or "none"
    if importlib.util.find_spec(runtime.module) is None:
        return _absent(runtime, f"{runtime.module} is not installed (torch {torch_version})", torch=torch_version)
    version = _installed(runtime.distribution) or "unknown"
    versions = {"torch": torch_version, "version": version}
    # torch_xla X.Y is built against torch X.Y (its wheels do not say so in their metadata).
    if version != "unknown" and _release(version) != _release(torch_version):
        return _absent(runtime, f"{runtime.module} {version} needs torch {_release(version)}, and this torch is "
                                f"{torch_version}: {runtime.kind} is absent", **versions)
    try:
        mod = importlib.import_module(runtime.module)
        rt = importlib.import_module(runtime.module + ".runtime")
        platform = str(rt.device_type())
        count = int(rt.global_runtime_device_count())
        del mod
    except BaseException as e:  # noqa: BLE001  a broken runtime is an absent device with its reason
        text = " ".join(str(e).split())[:400]
        return _absent(runtime, f"import {runtime.module} {version} failed with torch {torch_version}: "
                                f"{type(e).__name__}: {text}", **versions)
    what = dict(runtime.platform_notes).get(platform, f"PJRT platform {platform}")
    chosen = os.environ.get(runtime.platform_env)
    how = f"{runtime.platform_env}={chosen}" if chosen else f"{runtime.platform_env} unset: {runtime.module}'s default"
    return {"kind": runtime.kind, "status": "real", "count": count, "reason": "", "platform": platform,
            "summary": f"{runtime.module} {version} on torch {torch_version}, {what} ({how})", **versions}


def probe(timeout_s: float = PROBE_TIMEOUT_S) -> list[dict]:
    """Every runtime, probed in a child process (nothing is imported here)."""
    reports = []
    for runtime in RUNTIMES:
        if importlib.util.find_spec(runtime.module) is None:  # the common case, without a child
            reports.append(probe_here(runtime))
            continue
        try:
            done = child_process.run([sys.executable, "-m", "crossdev.runtimes", runtime.kind], timeout=timeout_s)
        except OSError as e:
            reports.append(_absent(runtime, f"probing {runtime.module}: cannot start {sys.executable}: {e}"))
            continue
        found = [e for e in child_process.read_events(done.stdout) if e["event"] == "runtime"]
        if done.timed_out:
            reports.append(_absent(runtime, f"probing {runtime.module} took more than {timeout_s:.0f} s"))
        elif found:
            reports.append({k: v for k, v in found[-1].items() if k != "event"})
        else:
            reports.append(_absent(runtime, f"probing {runtime.module}: the process {child_process.describe_exit(done.returncode)}: "
                                            f"{done.stderr.strip()[-300:]}"))
    return reports


def load(kind: str) -> None:
    """Import and start the runtime of a kind in this process (a worker about to run cases on it)."""
    runtime = BY_KIND.get(kind)
    if runtime is None:
        return
    importlib.import_module(runtime.module)
    if runtime.start:
        where, _, name = (runtime.module + "." + runtime.start).rpartition(".")
        getattr(importlib.import_module(where), name)()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    wanted = [BY_KIND[k] for k in argv if k in BY_KIND] or list(RUNTIMES)
    out = sys.stdout
    sys.stdout = sys.stderr  # what a runtime prints while it starts is not the report
    for runtime in wanted:
        try:
            report = probe_here(runtime)
        except BaseException as e:  # noqa: BLE001
            report = _absent(runtime, f"probing {runtime.module}: {type(e).__name__}: {e}")
        out.write(child_process.event_line("runtime", **report) + "\n")  # as the worker's (docs/python-worker.md)
    out.flush()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # skip the runtime's teardown (its threads), the report is out
