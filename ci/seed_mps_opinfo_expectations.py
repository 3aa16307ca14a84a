#!/usr/bin/env python3
"""Writes matrices/opinfo/expectations/opinfo/mps.yaml from PyTorch's own MPS lists, in the installed
torch: torch/testing/_internal/common_mps.py, the expected-failure and skip lists test_mps.py's
TestConsistency applies (docs/opinfo.md, "Seeded expectations"). Nothing is guessed: each entry names
the list and line it comes from, and carries the comment PyTorch wrote above it.

    python3 ci/seed_mps_opinfo_expectations.py [--out FILE] [--check]

The lists are local variables of functions defined only when MPS is available, so the module is read
with `ast`, not run. Keys are PyTorch's `op.name + op.variant_test_name` (no dot); op_db maps them to
the full names of crossdev's case ids. mps_ops_modifier's lists judge TestConsistency.test_output_match
(crossdev's `forward`), mps_ops_grad_modifier's test_output_grad_match (`backward`). Every entry is
`execution: real`: the lists describe Apple's MPS, not the sim backend's mps-like profile. The file's
other entries (those not citing common_mps.py: `crossdev expectations accept`'s entries for the
simulated mps, hand-written ones) are kept, after the seeded ones. `--check` exits 1 when FILE differs
from what this torch's lists give (the file is stale)."""
from __future__ import annotations

import argparse
import ast
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parent.parent / "matrices/opinfo/expectations/opinfo/mps.yaml"
SOURCE = "torch/testing/_internal/common_mps.py"

# (function, list) -> (crossdev check, expectation status, class or None, what the list means to PyTorch).
# A list whose entries mix kinds of failure gets no class (the loader's `class` is optional) rather
# than a guessed one.
LISTS = {
    ("mps_ops_modifier", "UNIMPLEMENTED_XFAILLIST"): ("forward", "xfail", "unimplemented", "op not implemented on MPS"),
    ("mps_ops_modifier", "UNDEFINED_XFAILLIST"): ("forward", "xfail", "numerics", "output differs from the CPU"),
    ("mps_ops_modifier", "ON_MPS_XFAILLIST"): ("forward", "xfail", None, "fails on MPS"),
    ("mps_ops_modifier", "SKIPLIST"): ("forward", "skip", None, "skipped on MPS"),
    ("mps_ops_grad_modifier", "XFAILLIST_GRAD"): ("backward", "xfail", None, "gradient fails on MPS"),
    ("mps_ops_grad_modifier", "SKIPLIST_GRAD"): ("backward", "skip", None, "gradient skipped on MPS"),
    ("mps_ops_grad_modifier", "ON_MPS_XFAILLIST"): ("backward", "xfail", None, "gradient fails on MPS"),
}
# Lists left out, and why (written into the file's header).
LEFT_OUT = {
    "EMPTY_OPS_SKIPLIST": "empty* ops: crossdev compares them on metadata only (python/crossdev/opinfo/open_contract.py)",
    "MACOS_BEFORE_14_4_XFAILLIST": "applies only before macOS 14.4",
    "UNIMPLEMENTED_XFAILLIST_SPARSE": "sparse layouts only (test_sparse.py)",
    "mps_ops_error_inputs_modifier.XFAILLIST": "error inputs (TestErrorInputs), not compared with the CPU",
}
# mps_ops_modifier's own loop, for every op: float64 and complex128 are expected failures.
ALL_OPS_DTYPES = (("float64", "MPS has no float64"), ("complex128", "MPS has no complex128"))


def _dtype_names(node) -> list | None:
    """None (every dtype) or the dtype names of a `[torch.float16, ...]` literal."""
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    names = []
    for elt in node.elts:
        if not (isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == "torch"):
            raise ValueError(f"line {elt.lineno}: expected torch.<dtype>")
        names.append({"half": "float16", "float": "float32", "double": "float64", "cfloat": "complex64",
                      "cdouble": "complex128"}.get(elt.attr, elt.attr))
    return names


def _comment_above(lines, lineno) -> str:
    """The comment lines directly above source line `lineno` (1-based), joined."""
    out, i = [], lineno - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        text = lines[i].strip().lstrip("#").strip()
        if not text.startswith(("'", '"')):  # not a commented-out entry
            out.insert(0, text)
        i -= 1
    return " ".join(out)


def read_lists(path):
    """{(function, list): [(key, dtypes or None, line, comment)]}, read from the module's source."""
    text = pathlib.Path(path).read_text()
    lines = text.splitlines()
    found = {}
    for func in ast.walk(ast.parse(text)):
        if not isinstance(func, ast.FunctionDef) or func.name not in {f for f, _ in LISTS}:
            continue
        for node in ast.walk(func):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target if isinstance(node, ast.AnnAssign) else None
            if not isinstance(target, ast.Name) or (func.name, target.id) not in LISTS or not isinstance(node.value, ast.Dict):
                continue
            entries = found.setdefault((func.name, target.id), [])
            for k, v in zip(node.value.keys, node.value.values):
                entries.append((k.value, _dtype_names(v), k.lineno, _comment_above(lines, k.lineno)))
    missing = [f"{f}.{n}" for f, n in LISTS if (f, n) not in found]
    if missing:
        raise SystemExit(f"{path}: lists not found: {', '.join(missing)} (PyTorch moved them: update LISTS)")
    return found


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def kept_entries(path) -> list:
    """The entry lines of an existing file that this script did not write (one flow mapping each)."""
    if not path.exists():
        return []
    return [line for line in path.read_text().splitlines() if line.startswith("  - {") and SOURCE not in line]


def render(found, full_names, torch_version, kept=()) -> str:
    """The YAML text: one flow mapping per entry, in the lists' order, then the kept entries."""
    out = [f"# Seeded by ci/seed_mps_opinfo_expectations.py from torch {torch_version}'s {SOURCE}",
           "# (TestConsistency's lists; regenerate, never hand-edit). Lists left out:"]
    out += [f"#   {name}: {why}" for name, why in LEFT_OUT.items()]
    out += ["# Keys with no OpInfo (name + variant_test_name) in this torch's op_db, left out:",
            "description: Real MPS's expected failures of the opinfo suite, from PyTorch's own lists (not sim's).",
            "expectations:"]
    unknown = []
    for (func, name), entries in found.items():
        check, status, cls, meaning = LISTS[(func, name)]
        for key, dtypes, line, comment in entries:
            if key not in full_names:
                unknown.append(f"{name}:{key}")
                continue
            for full in full_names[key]:
                for dtype in (dtypes or ["*"]):
                    reason = f"{SOURCE}:{line} {func}.{name} ({meaning})" + (f": {comment}" if comment else "")
                    fields = [f"match: {_quote(f'*/{full}/mps/{dtype}/{check}*')}", f"status: {status}",
                              f"reason: {_quote(reason)}"]
                    if cls:
                        fields.append(f"class: {cls}")
                    fields.append("execution: real")
                    out.append("  - {" + ", ".join(fields) + "}")
    for dtype, why in ALL_OPS_DTYPES:
        reason = f"{SOURCE} mps_ops_modifier: every op expectedFailure for {dtype} ({why})"
        out.append("  - {" + f"match: {_quote(f'*/mps/{dtype}/*')}, status: xfail, reason: {_quote(reason)}, "
                   "class: dtype_unsupported, execution: real" + "}")
    if kept:
        out.append("  # Not from PyTorch's lists (kept as they are when this file is regenerated):")
        out += list(kept)
    if unknown:
        out.insert(2 + len(LEFT_OUT) + 1, "#   " + ", ".join(unknown))
    return "\n".join(out) + "\n"


def common_mps_path() -> str:
    """The installed torch's common_mps.py, found without running it."""
    import importlib.util
    return importlib.util.find_spec("torch.testing._internal.common_mps").origin


def generate(kept=()) -> str:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    full_names = {}
    for op in op_db:
        full = f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name
        full_names.setdefault(op.name + op.variant_test_name, []).append(full)
    return render(read_lists(common_mps_path()), full_names, torch.__version__.split("+")[0], kept)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when --out is not what this torch's lists give")
    args = parser.parse_args(argv)
    text = generate(kept_entries(args.out))
    if args.check:
        if not args.out.exists() or args.out.read_text() != text:
            print(f"{args.out} is stale: regenerate it with ci/seed_mps_opinfo_expectations.py", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
