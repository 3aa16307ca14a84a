"""Which OpInfos a row selects: a glob over the full name, `name` or `name.variant_test_name`."""
from __future__ import annotations

import difflib
import fnmatch

GLOB_CHARS = "*?["


def full_name(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def load_op_db():
    """torch's op_db. Raises ImportError naming the missing package when a dependency of
    torch.testing._internal (expecttest, numpy: the `opinfo` extra) is not installed."""
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except ModuleNotFoundError as e:
        raise ImportError(f"torch's op_db cannot be imported: the package '{e.name}' is missing "
                          f"(pip install 'crossdev[opinfo]', or pip install {e.name})") from e
    return op_db


def _globs(pattern) -> list:
    return [pattern] if isinstance(pattern, str) else list(pattern)


def _name(op_or_name) -> str:
    return op_or_name if isinstance(op_or_name, str) else full_name(op_or_name)


def select(op_db, pattern, exclude=()) -> list:
    """The OpInfos (or full names, given names: op_names.cached()) whose full name matches `pattern`
    (a glob, or a list of globs: any) and none of `exclude`, in op_db's order."""
    globs = _globs(pattern)
    return [op for op in op_db
            if any(fnmatch.fnmatchcase(_name(op), g) for g in globs)
            and not any(fnmatch.fnmatchcase(_name(op), ex) for ex in exclude)]


def selection_problem(op_db, pattern, exclude=()) -> str | None:
    """Why `pattern` (a glob, or a list of globs, each of which must select) is bad input, or None.
    A plain name torch lacks gets the nearest matches. `op_db`: the OpInfos, or their full names."""
    if isinstance(pattern, list) and pattern and all(isinstance(g, str) for g in pattern):
        problems = [p for p in (selection_problem(op_db, g, exclude) for g in pattern) if p]
        return "; ".join(problems) or None
    if not isinstance(pattern, str) or not pattern:
        return "expected a glob over OpInfo names (e.g. 'add', 'nn.functional.*', '*')"
    if select(op_db, pattern, exclude):
        return None
    names = sorted({_name(op) for op in op_db})
    if not any(c in pattern for c in GLOB_CHARS):
        near = difflib.get_close_matches(pattern, names, n=5, cutoff=0.6)
        hint = f"; nearest: {', '.join(near)}" if near else ""
        return f"no OpInfo named '{pattern}' in this torch's op_db ({len(names)} OpInfos){hint}"
    if select(op_db, pattern):
        return f"the glob '{pattern}' selects OpInfos, but `exclude` removes all of them"
    return f"the glob '{pattern}' selects no OpInfo in this torch's op_db ({len(names)} OpInfos, e.g. " \
           f"{', '.join(names[:5])}, ...)"
