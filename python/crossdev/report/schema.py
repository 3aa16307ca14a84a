"""The bundle schema ("crossdev.bundle", versions 1 to 3) as data, and the checker that walks it; also the
envelope of a bundle set ("crossdev.bundle_set", version 1), which `crossdev merge` writes.

docs/bundle-schema.md describes the same fields for people; this table is what the validator
and the renderer trust. Writers may add fields within a version (readers ignore unknown keys);
removing or retyping a field needs a new schema_version.
"""
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Tuple

SCHEMA_NAME = "crossdev.bundle"
# 2: an ops case's `max_ulp` is the floored ULP error (docs/parity.md); in version 1 it was
# unfloored, and still reads (the scoreboard shows a ULP figure only where it is informative).
# 3: one meaning per word (docs/ARCHITECTURE.md, Glossary): the redirect action `fallback` is
# `substituted`, the recovery actions `fallback_cpu` / `fallback_next_device` are `move_to_cpu` /
# `move_to_next_device`, manager rows `mgr.fallback.*` (check fallback) are `mgr.chain.*` (check
# device_chain), the device log's `fallback` category is `chain_step`. Older bundles still read; the
# redirect table shows their action under the new name.
SUPPORTED_VERSIONS = (1, 2, 3)
FLOORED_ULP_SINCE = 2
RENAMED_WORDS_SINCE = 3
REDIRECT_ACTIONS_BEFORE_3 = {"fallback": "substituted"}  # old name -> name since version 3
# `crossdev merge`'s output: several bundles in one file, each read as if it were its own file.
BUNDLE_SET_NAME = "crossdev.bundle_set"
SUPPORTED_SET_VERSIONS = (1,)

from crossdev.case_statuses import EXECUTIONS, EXPECTATION_STATUSES, GATING_STATUSES, STATUSES  # noqa: E402,F401  (the one table)
PROVENANCES = ("real", "simulated")


class Spec:
    """One node of the schema: checks a value and yields "path: expected X, got Y" errors."""

    def check(self, value: Any, path: str) -> Iterator[str]:
        raise NotImplementedError


def _got(value: Any) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


@dataclass
class Scalar(Spec):
    types: Tuple[type, ...]
    name: str

    def check(self, value, path):
        # bool is an int in Python, but never a number or string in this schema.
        if isinstance(value, bool) and bool not in self.types:
            yield f"{path}: expected {self.name}, got {_got(value)}"
        elif not isinstance(value, self.types):
            yield f"{path}: expected {self.name}, got {_got(value)}"


@dataclass
class Nullable(Spec):
    inner: Spec

    def check(self, value, path):
        if value is not None:
            yield from self.inner.check(value, path)


@dataclass
class OneOf(Spec):
    values: Tuple[str, ...]

    def check(self, value, path):
        if value not in self.values:
            yield f"{path}: expected one of {', '.join(self.values)}, got {_got(value)}"


@dataclass
class ListOf(Spec):
    item: Spec
    # Names an item in errors by a field of it ("cases[3] (id 'x')") so a reader can find it.
    label_key: str = ""

    def check(self, value, path):
        if not isinstance(value, list):
            yield f"{path}: expected a list, got {_got(value)}"
            return
        for i, item in enumerate(value):
            label = f"{path}[{i}]"
            if self.label_key and isinstance(item, dict) and isinstance(item.get(self.label_key), str):
                label += f" ({self.label_key} {item[self.label_key]!r})"
            yield from self.item.check(item, label)


@dataclass
class MapOf(Spec):
    value_spec: Spec

    def check(self, value, path):
        if not isinstance(value, dict):
            yield f"{path}: expected an object, got {_got(value)}"
            return
        for key, item in value.items():
            yield from self.value_spec.check(item, f"{path}.{key}")


@dataclass
class Obj(Spec):
    required: Dict[str, Spec]
    optional: Dict[str, Spec] = field(default_factory=dict)

    def check(self, value, path):
        if not isinstance(value, dict):
            yield f"{path}: expected an object, got {_got(value)}"
            return
        for key, spec in self.required.items():
            if key not in value:
                yield f"{path}: missing required field '{key}'"
            else:
                yield from spec.check(value[key], f"{path}.{key}")
        for key, spec in self.optional.items():
            if key in value:
                yield from spec.check(value[key], f"{path}.{key}")


@dataclass
class Number(Spec):
    """A JSON number or null. Integers must fit a float64 (every reader converts them): 1e999 reads as an
    infinity and is shown as `inf`, but a 400-digit integer cannot be converted at all."""
    non_negative: bool = False

    def check(self, value, path):
        what = "a non-negative number of seconds or null" if self.non_negative else "a number or null"
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            yield f"{path}: expected {what}, got {_got(value)}"
        elif isinstance(value, int) and abs(value) > _FLOAT_MAX:
            yield f"{path}: expected {what} (within the float64 range), got an integer of {len(str(abs(value)))} digits"
        elif self.non_negative and not value >= 0:
            yield f"{path}: expected {what}, got {_got(value)}"


_FLOAT_MAX = int(sys.float_info.max)

STR = Scalar((str,), "a string")
INT = Scalar((int,), "an integer")
BOOL = Scalar((bool,), "true or false")
# NaN and infinities are written as null (JSON has no spelling for them).
NUMBER = Number()
SECONDS = Number(non_negative=True)

COUNTS = Obj({name: INT for name in ("total",) + STATUSES + EXECUTIONS} | {"gates": BOOL})

DEVICE = Obj({"kind": STR, "count": INT, "provenance": OneOf(PROVENANCES), "names": ListOf(STR)})

EXECUTION_TARGET = Obj(
    {
        "device_kind": STR,
        "device_model": STR,
        "driver": STR,
        "libtorch_version": STR,
        "cuda_version": STR,
        "compiler": STR,
        "git_commit": STR,
        "host": STR,
        "simulated": BOOL,
        "simulate_spec": STR,
        "devices": ListOf(DEVICE),
    },
    # shard: "I/N" of `crossdev run --shard`, absent when unsharded; sim_diverge: the simulated kinds whose
    # sim differed from the CPU where a real device may (CROSSDEV_SIM_DIVERGE), absent when none.
    # cuda_kernels: crossdev's CUDA kernels, "built" or "not built (<why>)"; absent when LibTorch has no CUDA.
    optional={"shard": STR, "sim_diverge": STR, "cuda_kernels": STR},
)

# A case's structured `data` (written by Python suites; docs/bundle-schema.md, "Models data"): the models
# suite's error along the depth, one item per module call and phase, and the train check's losses per step.
MODEL_LAYER = Obj(
    {"module": STR, "call": INT, "phase": OneOf(("forward", "backward")), "inherited": NUMBER, "own": NUMBER},
    optional={"parent": Nullable(INT), "inherited_passed": Nullable(BOOL), "own_passed": Nullable(BOOL),
              "limit": NUMBER},
)
CASE_DATA = Obj({}, optional={
    "layers": ListOf(MODEL_LAYER, "module"),
    "losses": Obj({}, optional={run: ListOf(NUMBER) for run in ("golden", "float64", "device")}),
    "first_divergence_call": INT,
})

CASE = Obj(
    {
        "id": STR,
        "suite": STR,
        "source": STR,
        "status": OneOf(STATUSES),
        "execution": OneOf(EXECUTIONS),
        "metrics": MapOf(NUMBER),
        "message": STR,
    },
    optional={
        "row_id": STR,
        "intent": STR,
        "file": STR,
        "line": INT,
        "device": STR,
        "simulated": BOOL,
        "duration_s": SECONDS,
        "details": MapOf(STR),
        "data": CASE_DATA,
    },
)

# Google Benchmark's own JSON (context + benchmarks); only what the report reads is checked.
BENCHMARK = Obj({"name": STR}, optional={
    "run_name": STR, "run_type": STR, "aggregate_name": STR, "error_occurred": BOOL, "error_message": STR,
    "real_time": NUMBER, "cpu_time": NUMBER, "time_unit": STR,
    "bytes_per_second": NUMBER, "items_per_second": NUMBER, "bw_util": NUMBER,
})
BENCHMARKS = Obj({"benchmarks": ListOf(BENCHMARK, "name")}, optional={"context": Obj({})})

# An expectation entry that matched no case of a run that covered its whole scope (the opinfo suite's
# rule, conformance/suites/suite_expectations.h); added within version 3 (an optional field).
STALE_EXPECTATION = Obj({"where": STR, "match": STR, "status": OneOf(EXPECTATION_STATUSES), "reason": STR,
                         "device_kind": STR})

BUNDLE = Obj(
    {
        "schema": OneOf((SCHEMA_NAME,)),
        "schema_version": INT,
        "created_utc": STR,
        "execution_target": EXECUTION_TARGET,
        "cases": ListOf(CASE, "id"),
    },
    optional={
        "tool": Obj({"name": STR, "version": STR}),
        "matrices": ListOf(STR),
        "summary": COUNTS,
        "summary_by_suite": MapOf(COUNTS),
        "benchmarks": Nullable(BENCHMARKS),
        "device_log": Nullable(Obj({})),
        "stale_expectations": ListOf(STALE_EXPECTATION, "where"),
        # A shard's entries that match none of its cases (--shard I/N; stale where all N list them,
        # crossdev.report.shards); added within version 3 (an optional field).
        "shard_unmatched_expectations": ListOf(STALE_EXPECTATION, "where"),
    },
)


def check_bundle(doc: Any) -> Iterator[str]:
    """Yields every schema error in a parsed bundle; nothing when it is valid."""
    if isinstance(doc, dict) and isinstance(doc.get("schema_version"), int):
        version = doc["schema_version"]
        if version not in SUPPORTED_VERSIONS:
            supported = ", ".join(map(str, SUPPORTED_VERSIONS))
            yield f"bundle.schema_version: unsupported version {version} (this reader knows {supported})"
            return
    yield from BUNDLE.check(doc, "bundle")


BUNDLE_SET = Obj(
    {
        "schema": OneOf((BUNDLE_SET_NAME,)),
        "schema_version": INT,
        # Each bundle is checked on its own, with check_bundle, once the set is known to be well formed.
        "bundles": ListOf(Obj({"source": STR, "bundle": Obj({})}), "source"),
    },
    optional={
        "created_utc": STR,
        "tool": Obj({"name": STR, "version": STR}),
    },
)


def check_bundle_set(doc: Any) -> Iterator[str]:
    """Yields every error in the envelope of a parsed bundle set (not in the bundles it holds)."""
    if isinstance(doc, dict) and isinstance(doc.get("schema_version"), int):
        version = doc["schema_version"]
        if version not in SUPPORTED_SET_VERSIONS:
            supported = ", ".join(map(str, SUPPORTED_SET_VERSIONS))
            yield f"set.schema_version: unsupported version {version} (this reader knows {supported})"
            return
    problems = list(BUNDLE_SET.check(doc, "set"))
    yield from problems
    if not problems and not doc["bundles"]:
        yield "set.bundles: an empty list (expected at least one crossdev.bundle)"
