"""matrices/bench/sweep.yaml: the size sweep's cases and the per-call figure's settings (issue 23).

The one source of truth for the sweep's sizes; peer_bench.py times the cases, per_call.py the
per-call figure, bench/summarize.py judges both against its TARGETS table.
"""
import pathlib
from dataclasses import dataclass
from typing import List, Tuple

import yaml_input
from bench_sizes import parse_size, size_label
from yaml_input import InputError

ROOT = pathlib.Path(__file__).resolve().parents[2]
SWEEP_PATH = ROOT / "matrices" / "bench" / "sweep.yaml"
_SWEEP_KEYS = {"sizes", "dtypes", "passes", "impls", "repetitions", "min_time"}
_PER_CALL_KEYS = {"shape_set", "shape", "dtype", "threads", "repetitions", "min_time"}


@dataclass(frozen=True)
class SweepSpec:
    sizes: Tuple[Tuple[int, str], ...]   # (elements, label as written)
    dtypes: Tuple[str, ...]
    passes: Tuple[str, ...]
    impls: Tuple[str, ...]
    repetitions: int
    min_time: float


@dataclass(frozen=True)
class PerCallSpec:
    shape_set: str                       # crossdev.ops.make_inputs' shape set: the op's smallest realistic inputs
    shape: Tuple[int, ...]               # the main tensor's shape where every input has that shape
    dtype: str
    threads: int
    repetitions: int
    min_time: float


def _section(doc, key, allowed, path):
    section = doc.get(key)
    if not isinstance(section, dict):
        raise InputError(f"{path}: expected a `{key}` mapping ({', '.join(sorted(allowed))})")
    unknown = set(section) - allowed
    missing = allowed - set(section)
    if unknown or missing:
        raise InputError(f"{path}: {key}: " + "; ".join(
            ([f"unknown key(s) {', '.join(sorted(unknown))}"] if unknown else [])
            + ([f"missing key(s) {', '.join(sorted(missing))}"] if missing else []))
            + f"; expected {', '.join(sorted(allowed))}")
    return section


def _strings(section, key, where, allowed=None):
    values = section[key]
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise InputError(f"{where}.{key}: expected a non-empty list of names")
    bad = [v for v in values if allowed is not None and v not in allowed]
    if bad:
        raise InputError(f"{where}.{key}: unknown {', '.join(bad)}; expected some of {', '.join(allowed)}")
    return tuple(values)


def _timing(section, where):
    reps, min_time = section["repetitions"], section["min_time"]
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise InputError(f"{where}.repetitions: expected an integer >= 1")
    if not isinstance(min_time, (int, float)) or isinstance(min_time, bool) or min_time <= 0:
        raise InputError(f"{where}.min_time: expected seconds > 0")
    return reps, float(min_time)


def load(path=SWEEP_PATH, impl_names=()):
    """(SweepSpec, PerCallSpec) from the file. Raises InputError naming the file and key."""
    doc = yaml_input.load(path)
    if not isinstance(doc, dict) or doc.get("suite") != "bench_sweep":
        raise InputError(f"{path}: expected suite: bench_sweep with `sweep` and `per_call` mappings")
    s = _section(doc, "sweep", _SWEEP_KEYS, path)
    where = f"{path}: sweep"
    if not isinstance(s["sizes"], list) or not s["sizes"]:
        raise InputError(f"{where}.sizes: expected a non-empty list of element counts such as 1K, 8M")
    sizes = tuple(parse_size(size, f"{where}.sizes") for size in s["sizes"])
    sweep = SweepSpec(sizes, _strings(s, "dtypes", where), _strings(s, "passes", where, ("fwd", "fwd_bwd")),
                      _strings(s, "impls", where, tuple(impl_names) or None), *_timing(s, where))
    c = _section(doc, "per_call", _PER_CALL_KEYS, path)
    where = f"{path}: per_call"
    shape = c["shape"]
    if not isinstance(shape, list) or not shape or not all(isinstance(d, int) and d > 0 for d in shape):
        raise InputError(f"{where}.shape: expected a list of positive dimensions such as [2, 8, 64]")
    threads = c["threads"]
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise InputError(f"{where}.threads: expected an integer >= 1")
    for key in ("shape_set", "dtype"):
        if not isinstance(c[key], str):
            raise InputError(f"{where}.{key}: expected a name")
    per_call = PerCallSpec(c["shape_set"], tuple(shape), c["dtype"], threads, *_timing(c, where))
    return sweep, per_call


def sweep_cases(spec: SweepSpec, layouts) -> Tuple[List[tuple], List[str]]:
    """(op, dtype, elements, label, pass, seed) for every op x size x dtype x pass, and a note per op
    whose granule does not divide some sizes: each of those is rounded up to a multiple of the granule
    (so 1K..64K all become scaled_masked_softmax's 256K, timed once).
    layouts: crossdev.bench.layouts(), [(op, granule, description)]."""
    cases, notes = [], []
    for op, granule, description in layouts:
        rounded = {label: -(-elements // granule) * granule for elements, label in spec.sizes}
        raised = [f"{label} -> {size_label(rounded[label])}" for elements, label in spec.sizes if elements % granule]
        if raised:
            notes.append(f"{op}: its bench layout {description} needs a multiple of {size_label(granule)} elements: "
                         f"swept at {', '.join(raised)}")
        legal = sorted(set(rounded.values()))
        for elements in legal:
            for dtype in spec.dtypes:
                for pass_name in spec.passes:
                    cases.append((op, dtype, elements, size_label(elements), pass_name, 0))
    return cases, notes
