"""Loading user libraries (C++ extensions that register ops, presets or hooks) into this process,
checked first in a child process.

A library can fail to load in a way no caller can catch: an exception thrown by its static
initialisers (``TORCH_LIBRARY(crossdev, m)``, a namespace crossdev already holds, or a second copy
of an extension already loaded) unwinds into the dynamic loader, and the process ends with
std::terminate (exit 134 and a core). So ``load_checked`` first has the engine load the same
libraries, in the same order, in a child process (``crossdev load-check``, impl/util/load_library.h),
which reports such a failure as one line; only when every library loads there does it call
``torch.ops.load_library`` here. Used by the pytest plugin's ``--crossdev-load-library``.
"""
from __future__ import annotations

import os
import signal
import subprocess

from crossdev import _paths

LOADING_PREFIX = "crossdev load-check: loading: "
ERROR_PREFIX = "crossdev load-check: error: "
CHECK_TIMEOUT_S = 300


class LoadLibraryError(Exception):
    """str(): "cannot load 'PATH': <the loader's or PyTorch's message>"."""


def _describe(returncode: int) -> str:
    if returncode < 0:
        try:
            name = f" ({signal.Signals(-returncode).name})"
        except ValueError:
            name = ""
        return f"was killed by signal {-returncode}{name}"
    return f"exited with status {returncode}"


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
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=_paths.engine_environment(), timeout=CHECK_TIMEOUT_S)
        output, how = proc.stdout.decode(errors="replace"), None if proc.returncode == 0 else _describe(proc.returncode)
    except subprocess.TimeoutExpired as e:
        output, how = (e.stdout or b"").decode(errors="replace"), f"was still loading it after {CHECK_TIMEOUT_S} s"
    except OSError as e:
        raise LoadLibraryError(f"cannot check the libraries in a child process: cannot run '{engine}': {e}") from None
    if how is None:
        return
    loading, error, other = "", "", []
    for line in (l.strip() for l in output.splitlines()):
        if line.startswith(LOADING_PREFIX):
            loading = line[len(LOADING_PREFIX):]
        elif line.startswith(ERROR_PREFIX):
            error = line[len(ERROR_PREFIX):]
        elif line:
            other.append(line)
    if error and not how.startswith("was still"):
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
