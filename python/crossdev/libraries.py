"""Loading user libraries (C++ extensions that register ops, presets or hooks) into this process,
checked first in a child process.

A library can fail to load in a way no caller can catch: an exception thrown by its static
initialisers (``TORCH_LIBRARY(crossdev, m)``, a namespace crossdev already holds, or a second copy
of an extension already loaded) unwinds into the dynamic loader, and the process ends with
std::terminate (exit 134 and a core). So ``load_checked`` first has the engine load the same
libraries, in the same order, in a child process (``crossdev load-check``, conformance/runner/library_check.h,
started through crossdev.child_process), which reports such a failure as one event; only when every
library loads there does it call ``torch.ops.load_library`` here. Used by the pytest plugin's ``--crossdev-load-library``.
"""
from __future__ import annotations

import os

from crossdev import _paths, child_process

CHECK_TIMEOUT_S = 300


class LoadLibraryError(Exception):
    """str(): "cannot load 'PATH': <the loader's or PyTorch's message>"."""


def check(paths, simulate: str = "") -> None:
    """Load ``paths`` (in order) in a child process, as ``crossdev run --load-library`` does; raise
    LoadLibraryError naming the first that fails and why. ``simulate``: the run's simulation spec
    (the host is prepared with it first, as in the run). No-op when the engine is not there."""
    paths = [os.fspath(p) for p in paths]
    engine = _paths.engine_binary()
    if not paths or not engine.is_file():
        return
    argv = [str(engine), "load-check", *(["--simulate", simulate] if simulate else []), *paths]
    try:
        done = child_process.run(argv, timeout=CHECK_TIMEOUT_S, env=_paths.engine_environment(), merge_stderr=True)
    except OSError as e:
        raise LoadLibraryError(f"cannot check the libraries in a child process: cannot run '{engine}': {e}") from None
    if done.returncode == 0:
        return
    how = (f"was still loading it after {CHECK_TIMEOUT_S} s" if done.timed_out
           else child_process.describe_exit(done.returncode))
    loading, error = "", ""
    for event in child_process.read_events(done.stdout):  # `loading` (path) before each library, `fatal` (message)
        if event["event"] == "loading":
            loading = str(event.get("path", ""))
        elif event["event"] == "fatal":
            error = str(event.get("message", ""))
    other = [line.strip() for line in done.stdout.splitlines()
             if line.strip() and not child_process.read_events(line)]  # what the libraries printed
    if error and not done.timed_out:
        raise LoadLibraryError(error)
    tail = " | ".join(other[-3:])[-1000:]
    last = f"; its last output: {tail}" if tail else ""
    if loading:
        raise LoadLibraryError(f"cannot load '{loading}': the process loading it {how}{last}")
    raise LoadLibraryError(f"cannot check the libraries in a child process: '{engine}' {how}{last}")


def load_checked(paths, simulate: str = "") -> list[str]:
    """check(paths, simulate), then ``torch.ops.load_library`` each path here, in order. Returns
    the paths loaded; raises LoadLibraryError (nothing is loaded here when the check fails)."""
    paths = [os.fspath(p) for p in paths]
    if not paths:
        return []
    check(paths, simulate)
    import torch  # noqa: WPS433  (only when there is something to load)
    for path in paths:
        try:
            torch.ops.load_library(path)
        except (OSError, RuntimeError) as e:
            message = " ".join(str(e).split("Exception raised from")[0].split())
            raise LoadLibraryError(f"cannot load '{path}': {message}; "
                                   "expected a shared library (.so) built against this LibTorch") from None
    return paths
