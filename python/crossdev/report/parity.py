"""The cross-device parity scoreboard model, from `suite: ops` cases of every runner.

Ops case ids are "<row>/<device kind>/<dtype>/<shape set>/<impl>"; details carry op, dtype and
one comparison summary per (reference, tensor), e.g. "golden out": "close: 64 elements,
max_abs=1e-07, max_rel=2e-07, max_ulp=1 (...)". A scoreboard cell is one (op, dtype, column),
where a column is one device kind on one runner; it keeps the worst value over shape sets, impls
and tensors, because a parity claim is only as good as its worst case.

The ULP figure (docs/parity.md, "ULP error") informs only up to 2^(mantissa bits) of the dtype: no
element that passes reaches it (bundle schema 2: the floored figure), and beyond it an error is
larger than the magnitude it is counted against, which max_abs and max_rel say better. Version 1
bundles carry the unfloored figure, which near zero reached 1e32 and more on passing cases; the
same rule keeps those out of sight.
"""
import math
import re
from dataclasses import dataclass, field
from itertools import combinations
from typing import Dict, List, Optional, Tuple

from crossdev.case_statuses import STATUS_RANK
from crossdev.report.bundle import metric
from crossdev.report.merge import Report

OPS_SUITE = "ops"
_METRICS_IN_SUMMARY = re.compile(r"max_abs=([^,;\s]+), max_rel=([^,;\s]+), max_ulp=([^,;\s]+)")
# Stored mantissa bits (precision - 1) per dtype name: the ULP figure's informative range.
MANTISSA_BITS = {"float64": 52, "float32": 23, "float16": 10, "bfloat16": 7}
# A skipped case (e.g. no fused kernel on that device) says nothing about parity: it ranks below
# pass, so a cell shows "skip" only when nothing in it ran.
_STATUS_RANK = STATUS_RANK  # case_statuses.json's `rank`


def _number(text: str) -> float:
    """A number from a comparison summary: "1e-07", "inf", "-inf", "nan", "1e999" (inf); anything odd is NaN."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def _worse(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None:
        return b
    if b is None:
        return a
    if math.isnan(a):
        return a  # NaN (or NON_FINITE, a null metric) stays as it was spelled
    if math.isnan(b):
        return b
    return max(a, b)


def ulp_informs(max_ulp: Optional[float], dtype: str) -> bool:
    """Whether a ULP figure is worth showing: finite and at most 2^(mantissa bits) of a floating
    dtype (any finite figure for an integer dtype, where a ulp is 1)."""
    if max_ulp is None or not math.isfinite(max_ulp):  # None, NaN, inf, a null metric (NON_FINITE is a NaN)
        return False
    bits = MANTISSA_BITS.get(dtype)
    return bits is None or max_ulp <= 2.0 ** bits


@dataclass
class RefError:
    """Worst abs, rel and ULP error against one reference ("golden", "vs_cpu", "fused_vs_fallback")."""
    max_abs: Optional[float] = None
    max_ulp: Optional[float] = None
    max_rel: Optional[float] = None

    def add(self, max_abs: Optional[float], max_ulp: Optional[float], max_rel: Optional[float] = None) -> None:
        self.max_abs = _worse(self.max_abs, max_abs)
        self.max_ulp = _worse(self.max_ulp, max_ulp)
        self.max_rel = _worse(self.max_rel, max_rel)


@dataclass
class Cell:
    status: str = "pass"
    cases: int = 0
    executions: set = field(default_factory=set)
    refs: Dict[str, RefError] = field(default_factory=dict)
    digests: Dict[str, str] = field(default_factory=dict)  # "<shape set>/<impl>" -> output digest

    @property
    def simulated(self) -> bool:
        return "simulated" in self.executions

    @property
    def ran(self) -> bool:
        return bool(self.executions - {"not_run"})

    def add(self, case: dict) -> None:
        if self.cases == 0 or _STATUS_RANK[case["status"]] > _STATUS_RANK[self.status]:
            self.status = case["status"]  # the worst status of the cell's cases
        self.cases += 1
        self.executions.add(case["execution"])
        for key, text in case.get("details", {}).items():
            reference, _, tensor = key.partition(" ")
            found = _METRICS_IN_SUMMARY.search(text) if tensor else None
            if found:
                self.refs.setdefault(reference, RefError()).add(_number(found.group(1)), _number(found.group(3)),
                                                                _number(found.group(2)))
        if "golden" not in self.refs and case["execution"] != "not_run":
            # No per-reference details: the case metrics are the worst over all references.
            max_abs, max_ulp, max_rel = metric(case, "max_abs"), metric(case, "max_ulp"), metric(case, "max_rel")
            if max_abs is not None or max_ulp is not None:
                self.refs.setdefault("all references", RefError()).add(max_abs, max_ulp, max_rel)
        digest = case.get("details", {}).get("output_digest")
        if digest:
            parts = case["id"].split("/")
            self.digests["/".join(parts[3:])] = digest


@dataclass
class Pair:
    """Two columns compared on identical portable inputs."""
    a: str
    b: str
    # Exact when both bundles carry output digests; otherwise the triangle-inequality bound
    # |a - b| <= err(a, golden) + err(b, golden), which is all the metrics can say across machines.
    identical: Optional[bool]
    abs_bound: Optional[float]


@dataclass
class Scoreboard:
    columns: List[str]                      # "<runner>/<device kind>"
    column_simulated: Dict[str, bool]
    rows: List[Tuple[str, str]]             # (op, dtype)
    cells: Dict[Tuple[str, str, str], Cell]  # (op, dtype, column)

    def pairs(self, op: str, dtype: str) -> List[Pair]:
        out = []
        present = [c for c in self.columns if (op, dtype, c) in self.cells and self.cells[(op, dtype, c)].ran]
        for a, b in combinations(present, 2):
            ca, cb = self.cells[(op, dtype, a)], self.cells[(op, dtype, b)]
            shared = set(ca.digests) & set(cb.digests)
            identical = all(ca.digests[k] == cb.digests[k] for k in shared) if shared else None
            ga, gb = ca.refs.get("golden"), cb.refs.get("golden")
            bound = None
            if ga and gb and ga.max_abs is not None and gb.max_abs is not None:
                bound = _worse(ga.max_abs, gb.max_abs) if math.isnan(ga.max_abs) or math.isnan(gb.max_abs) \
                    else ga.max_abs + gb.max_abs
            out.append(Pair(a, b, identical, bound))
        return out


def _op_dtype_kind(case: dict) -> Optional[Tuple[str, str, str]]:
    """(op, dtype, device kind) of an ops case; None when the id and details do not say."""
    parts = case["id"].split("/")
    details = case.get("details", {})
    op = details.get("op") or parts[0]
    dtype = details.get("dtype") or (parts[2] if len(parts) >= 5 else "")
    kind = parts[1] if len(parts) >= 5 else case.get("device", "").split(":")[0]
    return (op, dtype, kind) if op and dtype and kind else None


def build_scoreboard(report: Report) -> Optional[Scoreboard]:
    cells: Dict[Tuple[str, str, str], Cell] = {}
    columns: List[str] = []
    simulated: Dict[str, bool] = {}
    rows: List[Tuple[str, str]] = []
    for runner, case in report.cases():
        if case["suite"] != OPS_SUITE:
            continue
        key = _op_dtype_kind(case)
        if key is None:
            continue
        op, dtype, kind = key
        column = f"{runner.label}/{kind}"
        if column not in simulated:
            columns.append(column)
            simulated[column] = False
        if (op, dtype) not in rows:
            rows.append((op, dtype))
        cell = cells.setdefault((op, dtype, column), Cell())
        cell.add(case)
        simulated[column] = simulated[column] or cell.simulated
    if not cells:
        return None
    return Scoreboard(columns=columns, column_simulated=simulated, rows=sorted(rows), cells=cells)
