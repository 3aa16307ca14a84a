"""Loading one result bundle: parse, check against the schema, and wrap it for the views.

Every failure is a BundleError whose text starts with the file name (and line:column for JSON
syntax errors), so a merge job can name the bad runner and still merge the others.
"""
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from reports.schema import STATUSES, EXECUTIONS, check_bundle

MAX_ERRORS_SHOWN = 10


class BundleError(Exception):
    """A bundle that cannot be used: unreadable, not JSON, truncated, or not schema-valid."""

    def __init__(self, path: str, problems: List[str]):
        self.path = str(path)
        self.problems = problems
        shown = problems[:MAX_ERRORS_SHOWN]
        more = len(problems) - len(shown)
        text = f"{self.path}: " + f"\n{self.path}: ".join(shown)
        if more > 0:
            text += f"\n{self.path}: ... and {more} more problem(s)"
        super().__init__(text)


@dataclass
class Bundle:
    path: str
    doc: Dict[str, Any]
    label: str = ""  # set by merge: unique runner name in a merged report

    @property
    def target(self) -> Dict[str, Any]:
        return self.doc["execution_target"]

    @property
    def cases(self) -> List[Dict[str, Any]]:
        return self.doc["cases"]

    @property
    def simulated(self) -> bool:
        return bool(self.target.get("simulated"))

    @property
    def benchmarks(self) -> Optional[Dict[str, Any]]:
        return self.doc.get("benchmarks")

    @property
    def device_log(self) -> Optional[Dict[str, Any]]:
        return self.doc.get("device_log")

    @property
    def created(self) -> str:
        return self.doc.get("created_utc", "")


def _reject_constant(name: str):
    # Python's json accepts NaN/Infinity; the writer never emits them, so they mean corruption.
    raise ValueError(f"non-JSON number {name} (the writer spells NaN/inf as null)")


def _summary_problems(doc: Dict[str, Any]) -> List[str]:
    """The summary must agree with the cases: catches bundles edited or cut at a case boundary."""
    summary = doc.get("summary")
    if not isinstance(summary, dict):
        return []
    cases = doc["cases"]
    counted = Counter(c["status"] for c in cases) + Counter(c["execution"] for c in cases)
    problems = []
    if summary.get("total") != len(cases):
        problems.append(f"bundle.summary.total: {summary.get('total')} does not match the {len(cases)} case(s)")
    for key in STATUSES + EXECUTIONS:
        if summary.get(key) != counted.get(key, 0):
            problems.append(f"bundle.summary.{key}: {summary.get(key)} does not match the cases ({counted.get(key, 0)})")
    return problems


def parse_bundle(text: str, path: str) -> Bundle:
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        # A bundle always ends with its closing brace; without one the file was cut short.
        hint = " (the file is truncated)" if not text.rstrip().endswith("}") else ""
        raise BundleError(path, [f"{e.lineno}:{e.colno}: not valid JSON{hint}: {e.msg}"]) from None
    except ValueError as e:
        raise BundleError(path, [f"not valid JSON: {e}"]) from None
    problems = list(check_bundle(doc))
    if not problems:
        problems = _summary_problems(doc)
    if problems:
        raise BundleError(path, problems)
    return Bundle(path=str(path), doc=doc)


def load_bundle(path) -> Bundle:
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise BundleError(path, [f"cannot read: {e.strerror}"]) from None
    if not raw.strip():
        raise BundleError(path, ["empty file (expected a crossdev.bundle JSON document)"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BundleError(path, [f"byte {e.start}: not UTF-8 text"]) from None
    return parse_bundle(text, str(path))


def metric(case: Dict[str, Any], name: str) -> Optional[float]:
    """A case metric as a float: None when absent, NaN when written as null (a NaN or an infinity)."""
    metrics = case.get("metrics", {})
    if name not in metrics:
        return None
    value = metrics[name]
    return math.nan if value is None else float(value)
