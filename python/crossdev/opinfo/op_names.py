"""The full names of op_db's OpInfos, without importing op_db: what the engine's `check` request needs.

Importing op_db (torch.testing._internal.common_methods_invocations) costs seconds; the check only
needs the names to judge a row's globs. Every worker that imports op_db writes the names to a cache
file; a later check reads them from there. The file is keyed by this torch install: its version, the
size and mtime of the files op_db is built from, the environment variables op_db reads, and the Python
version; any change is a miss, and a miss (or an unreadable or unwritable cache) imports op_db as before.
The file also lists the third-party packages loaded when the names were stored (expecttest, numpy, ...):
one that can no longer be found is a miss too, so the check imports op_db and exits 2 naming it, as
without a cache.
Where: $CROSSDEV_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/crossdev (ci/cuda_build_check.sh's),
file opinfo_names.json (one torch install's names; another install's key replaces them)."""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import sys

FILE = "opinfo_names.json"


def cache_path() -> pathlib.Path:
    base = os.environ.get("CROSSDEV_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "crossdev")
    return pathlib.Path(base) / FILE


def install_key() -> str | None:
    """What identifies op_db's content in this process, without importing torch; None if torch is absent."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return None
    torch_dir = pathlib.Path(spec.origin).parent
    internal = torch_dir / "testing" / "_internal"
    files = [torch_dir / "version.py", *sorted(internal.glob("*.py")), *sorted((internal / "opinfo").rglob("*.py"))]
    stats = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        stats.append(f"{f.relative_to(torch_dir)}:{st.st_size}:{st.st_mtime_ns}")
    env = sorted(f"{k}={v}" for k, v in os.environ.items() if "OPINFO" in k)
    return json.dumps([str(torch_dir), sys.version, env, stats])


def loaded_packages() -> list:
    """The top-level third-party packages this process has imported (op_db's test dependencies among them)."""
    stdlib = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    tops = {name.partition(".")[0] for name in list(sys.modules)}
    candidates = sorted(t for t in tops if t and not t.startswith("_") and t not in stdlib and t not in ("torch", "crossdev"))
    return [t for t in candidates if _all_findable([t])]  # not the spec-less (e.g. Cython's `cython_runtime`)


def _all_findable(packages) -> bool:
    try:
        return all(importlib.util.find_spec(p) is not None for p in packages)
    except (ImportError, ValueError):
        return False


def cached() -> list | None:
    """The names stored for this torch install, or None (no cache, another install, unreadable, or a
    package op_db imported then is gone now)."""
    key = install_key()
    try:
        doc = json.loads(cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if key is None or not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("names"), list):
        return None
    if not isinstance(doc.get("packages"), list) or not _all_findable(str(p) for p in doc["packages"]):
        return None
    return [str(n) for n in doc["names"]]


def store(names: list) -> None:
    """Writes the names for this torch install (atomically); a cache that cannot be written is left alone."""
    key = install_key()
    if key is None:
        return
    path = cache_path()
    try:
        if cached() == list(names):
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "names": list(names), "packages": loaded_packages()}),
                       encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
