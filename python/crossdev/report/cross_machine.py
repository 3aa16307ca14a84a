"""Cross-machine pairs (docs/opinfo.md, "Cross-machine"): the runners of a merged report whose bundles hold
cases of the same `cross_machine` opinfo row are compared two by two, case by case, on the outputs each
recorded beside its bundle (crossdev.report.machine_outputs), with the tolerance the case recorded.

A pair is compared only when both bundles ran the same samples (the same `samples_sha256`); otherwise it
is refused, and so is a case whose outputs file is missing or not the bytes its bundle recorded: each is an
InputError (bad input, `crossdev report` and `crossdev gate` exit 2) naming the file and what was expected."""
import binascii
import struct
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from crossdev.report.bundle import Bundle
from crossdev.report.machine_outputs import OutputsError, compare_sample, load

AXIS = "cross_machine"
STATUSES = ("pass", "fail", "error")  # error: a sample raised on one runner only


@dataclass
class PairCase:
    case_id: str
    op: str
    dtype: str
    check: str
    status: str = "pass"
    samples: int = 0
    bitwise_equal: int = 0
    raised_on_both: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    tolerance: str = ""
    tolerance_source: str = ""
    compared: str = "values"
    failing: List[str] = field(default_factory=list)


@dataclass
class Pair:
    """Two runners (the first, in input order, is the reference side) on one cross_machine row."""
    a: Bundle
    b: Bundle
    row: str
    samples_sha256: str
    execution: str  # real when both runners' cases ran on real devices (always, on the CPU)
    cases: List[PairCase] = field(default_factory=list)
    only_in_a: List[str] = field(default_factory=list)
    only_in_b: List[str] = field(default_factory=list)
    refused: Optional[str] = None
    machines: Tuple[str, str] = ("?", "?")  # each side's CPU, as its outputs files say ("x86_64 AVX512, torch 2.13.0")

    @property
    def label(self) -> str:
        return f"{self.a.label} vs {self.b.label}"

    def counts(self) -> Counter:
        return Counter(c.status for c in self.cases)


@dataclass
class CrossMachine:
    pairs: List[Pair] = field(default_factory=list)

    def failing(self) -> List[Tuple[Pair, PairCase]]:
        return [(p, c) for p in self.pairs for c in p.cases if c.status != "pass"]


def _recorded(bundle: Bundle) -> Dict[str, Dict[str, dict]]:
    """row -> case id -> case, for the bundle's cross-machine cases that recorded outputs."""
    rows: Dict[str, Dict[str, dict]] = {}
    for case in bundle.cases:
        details = case.get("details") or {}
        if case.get("suite") == "opinfo" and details.get("axis") == AXIS and details.get("outputs"):
            row = case.get("row_id") or case["id"].split("/", 1)[0]
            rows.setdefault(row, {})[case["id"]] = case
    return rows


def _outputs_path(bundle: Bundle, details: dict) -> Path:
    """Beside the bundle (its own file, or the bundle set holding it), else where the run wrote it."""
    relative = Path(details["outputs"])
    for folder in (Path(bundle.source).parent, Path(bundle.file).parent):
        if (folder / relative).is_file():
            return folder / relative
    return Path(details.get("export_dir", ".")).parent / relative


def _outputs(bundle: Bundle, case: dict) -> dict:
    details = case["details"]
    path = _outputs_path(bundle, details)
    try:
        return load(path, details.get("outputs_sha256", ""))
    except OutputsError as e:
        raise OutputsError(f"{e} [case {case['id']} of {bundle.source}]") from None


def _tolerance(doc: dict) -> Tuple[float, float]:
    tol = doc.get("tolerance") or {}
    return float(tol.get("rtol", 0.0)), float(tol.get("atol", 0.0))


def _compare_case(case_id: str, a_case: dict, a_doc: dict, b_doc: dict) -> PairCase:
    d = a_case.get("details") or {}
    out = PairCase(case_id, str(d.get("op", "?")), str(d.get("dtype", "?")), str(d.get("check", "?")),
                   tolerance=str(d.get("tolerance", "")), tolerance_source=str(d.get("tolerance_source", "")))
    rtol, atol = _tolerance(a_doc)
    if _tolerance(b_doc) != (rtol, atol):  # another torch's op_db, or another row tolerance: the looser one judges
        rtol, atol = max(rtol, _tolerance(b_doc)[0]), max(atol, _tolerance(b_doc)[1])
        out.tolerance = f"rtol={rtol:g}, atol={atol:g}"
        out.tolerance_source += " (the runners recorded different tolerances: the larger of each)"
    values = "compared" not in a_doc and "compared" not in b_doc
    out.compared = "values" if values else (a_doc.get("compared") or b_doc.get("compared"))
    b_samples = {s["index"]: s for s in b_doc.get("samples", [])}
    for e in a_doc.get("samples", []):
        a = b_samples.get(e["index"])
        where = f"sample {e['index']} shapes {e.get('shapes', '?')}"
        if a is None:
            out.status = "error"
            out.failing.append(f"{where}: recorded by the first runner only")
            continue
        if e["status"] != "ok" or a["status"] != "ok":
            if e["status"] != "ok" and a["status"] != "ok":
                out.raised_on_both += 1
                continue
            out.status = "error"
            raised, message = ("first", e["message"]) if e["status"] != "ok" else ("second", a["message"])
            out.failing.append(f"{where}: raised on the {raised} runner only: {message}")
            continue
        c = compare_sample(e, a, rtol, atol, values)
        out.samples += 1
        out.bitwise_equal += c.bitwise_equal
        out.max_abs, out.max_rel, out.max_ulp = max(out.max_abs, c.max_abs), max(out.max_rel, c.max_rel), \
            max(out.max_ulp, c.max_ulp)
        if c.mismatch:
            out.status = "fail" if out.status == "pass" else out.status
            out.failing.append(f"{where}: {c.mismatch}")
    return out


def _pair(a: Bundle, b: Bundle, row: str, a_cases: Dict[str, dict], b_cases: Dict[str, dict],
          errors: List[Tuple[str, str]]) -> Pair:
    digests = [sorted({str((c.get("details") or {}).get("samples_sha256")) for c in cases.values()})
               for cases in (a_cases, b_cases)]
    executions = {c.get("execution") for c in list(a_cases.values()) + list(b_cases.values())}
    pair = Pair(a, b, row, digests[0][0], "real" if executions == {"real"} else "simulated")
    if digests[0] != digests[1] or len(digests[0]) != 1:
        pair.refused = (f"row '{row}': the two runners did not run the same samples (samples sha256 "
                        f"{', '.join(d[:16] for d in digests[0])} in {a.source}, {', '.join(d[:16] for d in digests[1])} "
                        f"in {b.source}); expected one runner to replay the other's: crossdev run --replay-samples "
                        "<the other runner's --export-samples folder>")
        errors.append((f"{a.source} + {b.source}", pair.refused))
        return pair
    pair.only_in_a = sorted(set(a_cases) - set(b_cases))
    pair.only_in_b = sorted(set(b_cases) - set(a_cases))
    for case_id in [c for c in a_cases if c in b_cases]:
        try:
            a_doc, b_doc = _outputs(a, a_cases[case_id]), _outputs(b, b_cases[case_id])
            try:
                pair.cases.append(_compare_case(case_id, a_cases[case_id], a_doc, b_doc))
            except (KeyError, TypeError, ValueError, AttributeError, struct.error, binascii.Error) as e:
                raise OutputsError(f"{_outputs_path(a, a_cases[case_id]['details'])} or "
                                   f"{_outputs_path(b, b_cases[case_id]['details'])}: not a well-formed "
                                   f"crossdev.cross_machine_outputs ({type(e).__name__}: {e})") from None
        except OutputsError as e:
            pair.refused = str(e)
            errors.append((a.source if a.source in str(e) else b.source, str(e)))
            pair.cases = []
            return pair
        pair.machines = tuple(f"{d.get('machine', '?')} {d.get('cpu_capability', '?')}, torch {d.get('torch', '?')}"
                              for d in (a_doc, b_doc))
    return pair


def compare_runners(runners: List[Bundle]) -> Tuple[CrossMachine, List[Tuple[str, str]]]:
    """Every pair of runners that share a cross_machine row, compared; and the (path, message) of what
    could not be (bad input)."""
    recorded = [(bundle, _recorded(bundle)) for bundle in runners]
    result, errors = CrossMachine(), []
    for (a, a_rows), (b, b_rows) in combinations([r for r in recorded if r[1]], 2):
        for row in [r for r in a_rows if r in b_rows]:
            result.pairs.append(_pair(a, b, row, a_rows[row], b_rows[row], errors))
    return result, errors
