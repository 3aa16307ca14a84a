"""Loading result bundles: parse, check against the schema, and wrap them for the views.

A file holds one crossdev.bundle, or a crossdev.bundle_set (`crossdev merge`) whose bundles are read
as if each had been its own file.

Every failure is a BundleError whose text starts with the file name (and line:column for JSON
syntax errors), so a merge job can name the bad runner and still merge the others.
"""
import json
import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from crossdev.report.schema import (BUNDLE_SET_NAME, EXECUTIONS, SCHEMA_NAME, STATUSES, check_bundle,
                                    check_bundle_set)

MAX_ERRORS_SHOWN = 10
# A bundle is a few levels deep; free-form parts (device_log, benchmark context) get some room. Deeper
# documents are rejected instead of exhausting the recursion of some reader (json, copy, a renderer).
MAX_DEPTH = 64
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


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
    file: str = ""  # the file it was read from: `path` itself, or the bundle set that holds it
    source: str = ""  # the bundle's own file: `path` itself, or its `source` in the bundle set

    def __post_init__(self):
        self.file = self.file or self.path
        self.source = self.source or self.path

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


def _case_path(i: int, case: Dict[str, Any]) -> str:
    return f"bundle.cases[{i}] (id {case['id']!r})"


def _labelling_problems(doc: Dict[str, Any]) -> List[str]:
    """execution, the simulated flag, the device and the target's device provenance must agree.

    A contradiction would let a simulated result count as a real-device pass, so it is bad input.
    Only contradictions are rejected: manager rows run real CPU work on hypothetical host profiles
    (device "hypothetical:cpu-only", execution real), and policy rows are simulated on any host.
    """
    target = doc["execution_target"]
    problems = []
    simulated_kinds = sorted({d["kind"] for d in target["devices"] if d["provenance"] == "simulated"})
    if target["simulated"] and not simulated_kinds:
        problems.append("bundle.execution_target.simulated: true, but no device kind has provenance simulated "
                        "(expected false when every device kind is real)")
    elif not target["simulated"] and simulated_kinds:
        problems.append(f"bundle.execution_target.simulated: false, but device kind(s) {', '.join(simulated_kinds)} "
                        "have provenance simulated (expected true when any device kind was simulated)")
    real_kinds = {d["kind"] for d in target["devices"] if d["provenance"] == "real"}
    if target["device_kind"] in simulated_kinds and target["device_kind"] not in real_kinds:
        problems.append(f"bundle.execution_target.device_kind: {target['device_kind']!r} has provenance simulated in "
                        "execution_target.devices (expected the most capable real kind)")
    for i, case in enumerate(doc["cases"]):
        execution = case["execution"]
        if "simulated" in case and case["simulated"] != (execution == "simulated"):
            flag = "true" if case["simulated"] else "false"
            problems.append(f"{_case_path(i, case)}.simulated: {flag} contradicts execution {execution!r} "
                            "(expected simulated == (execution == \"simulated\"))")
        if execution != "real":
            continue
        device = case.get("device", "")
        kind = device.split(":", 1)[0]
        if kind == "sim":
            problems.append(f"{_case_path(i, case)}.device: {device!r} is the simulator backend, so execution 'real' "
                            "is a contradiction (expected execution simulated)")
        elif kind in simulated_kinds and kind not in real_kinds:
            problems.append(f"{_case_path(i, case)}.device: {device!r} is of kind {kind}, which this run simulated "
                            "(execution_target.devices provenance simulated), so execution 'real' is a contradiction")
    return problems


def _structure_problems(doc: Any, text: str, max_depth: int = MAX_DEPTH, root: str = "bundle") -> List[str]:
    """What JSON allows but no reader can use: deep nesting, and lone UTF-16 surrogates (from \\ud800
    escapes), which are not Unicode text and cannot be written to an HTML, Markdown or XML file."""
    check_surrogates = bool(_SURROGATE_ESCAPE.search(text) or _SURROGATE.search(text))
    # Fast pass over the containers (and the strings, when the text can hold a surrogate at all).
    stack, deepest, bad_text = [(doc, 1)], 1, False
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > max_depth:
            break
        if isinstance(value, dict):
            if check_surrogates:
                bad_text = bad_text or any(_SURROGATE.search(k) for k in value)
                bad_text = bad_text or any(isinstance(v, str) and _SURROGATE.search(v) for v in value.values())
            stack.extend((v, depth + 1) for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            if check_surrogates:
                bad_text = bad_text or any(isinstance(v, str) and _SURROGATE.search(v) for v in value)
            stack.extend((v, depth + 1) for v in value if isinstance(v, (dict, list)))
    if deepest <= max_depth and not bad_text:
        return []
    return [_locate_structure_problem(doc, max_depth, root)]


def _locate_structure_problem(doc: Any, max_depth: int, root: str) -> str:
    """The slow pass, with JSON paths, once the fast pass found something."""
    stack = [(doc, 1, root)]
    while stack:
        value, depth, where = stack.pop()
        if depth > max_depth:
            return (f"{where[:200]}...: nested too deeply (more than {max_depth} levels; expected a crossdev.bundle, "
                    "which is a few levels deep)")
        if isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATE.search(key):
                    return f"{where}: key {ascii(key[:40])} holds a lone UTF-16 surrogate (expected valid Unicode text)"
                stack.append((item, depth + 1, f"{where}.{key}"))
        elif isinstance(value, list):
            stack.extend((item, depth + 1, f"{where}[{i}]") for i, item in enumerate(value))
        elif isinstance(value, str) and _SURROGATE.search(value):
            return f"{where}: {ascii(value[:40])} holds a lone UTF-16 surrogate (expected valid Unicode text)"
    return f"{root}: not a valid document"  # unreachable: the fast pass found a problem


_EXPECTED_DOCUMENT = (f"expected a {SCHEMA_NAME} (written by `crossdev run`) or a {BUNDLE_SET_NAME} "
                      "(written by `crossdev merge`)")


def _decode(text: str, path: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        # A bundle always ends with its closing brace; without one the file was cut short.
        hint = " (the file is truncated)" if not text.rstrip().endswith("}") else ""
        raise BundleError(path, [f"{e.lineno}:{e.colno}: not valid JSON{hint}: {e.msg}"]) from None
    except RecursionError:
        raise BundleError(path, [f"not valid JSON for a bundle: nested too deeply (more than {MAX_DEPTH} levels; "
                                 "expected a crossdev.bundle, which is a few levels deep)"]) from None
    except ValueError as e:
        raise BundleError(path, [f"not valid JSON: {e}"]) from None


def _document_kind_problems(doc: Any) -> List[str]:
    """A JSON document that is no crossdev bundle at all gets one problem saying what was expected,
    not one per missing field."""
    if not isinstance(doc, dict):
        return [f"bundle: expected a JSON object, got {type(doc).__name__}: not a crossdev bundle "
                f"({_EXPECTED_DOCUMENT})"]
    if "schema" not in doc:
        return [f"bundle: missing required field 'schema': not a crossdev bundle ({_EXPECTED_DOCUMENT})"]
    if doc["schema"] not in (SCHEMA_NAME, BUNDLE_SET_NAME):
        got = doc["schema"] if isinstance(doc["schema"], str) else type(doc["schema"]).__name__
        return [f"bundle.schema: expected one of {SCHEMA_NAME}, {BUNDLE_SET_NAME}, got {got!r}: not a crossdev "
                f"bundle ({_EXPECTED_DOCUMENT})"]
    return []


def _bundle_problems(doc: Dict[str, Any]) -> List[str]:
    problems = list(check_bundle(doc))
    if not problems:
        problems = _summary_problems(doc) + _labelling_problems(doc)
    return problems


def _parse_set(doc: Dict[str, Any], text: str, path: str) -> List[Bundle]:
    """The bundles of a crossdev.bundle_set; any problem in the set or in one of its bundles rejects the
    file (crossdev merge checked every bundle, so a bad one means the file was edited or damaged)."""
    # The set adds three levels (set, bundles list, entry) above each bundle.
    problems = _structure_problems(doc, text, MAX_DEPTH + 3, "set") or list(check_bundle_set(doc))
    if problems:
        raise BundleError(path, problems)
    bundles = []
    for i, entry in enumerate(doc["bundles"]):
        source = entry["source"]
        problems += [f"set.bundles[{i}] (source {source!r}): {p}" for p in _bundle_problems(entry["bundle"])]
        bundles.append(Bundle(path=f"{source} (in {path})", doc=entry["bundle"], file=str(path), source=source))
    if problems:
        raise BundleError(path, problems)
    return bundles


def parse_bundles(text: str, path: str) -> List[Bundle]:
    """The bundles a file holds: one for a crossdev.bundle, each of a crossdev.bundle_set's in order."""
    doc = _decode(text, path)
    problems = _document_kind_problems(doc)
    if problems:
        raise BundleError(path, problems)
    if doc["schema"] == BUNDLE_SET_NAME:
        return _parse_set(doc, text, str(path))
    problems = _structure_problems(doc, text) or _bundle_problems(doc)
    if problems:
        raise BundleError(path, problems)
    return [Bundle(path=str(path), doc=doc)]


def parse_bundle(text: str, path: str) -> Bundle:
    """Exactly one crossdev.bundle (a bundle set is refused: see parse_bundles)."""
    bundles = parse_bundles(text, path)
    if len(bundles) != 1 or bundles[0].file != bundles[0].path:
        raise BundleError(path, [f"a {BUNDLE_SET_NAME} of {len(bundles)} bundle(s): expected a single {SCHEMA_NAME} "
                                 "here"])
    return bundles[0]


_GZIP_MAGIC = b"\x1f\x8b"
MAX_GUNZIPPED_BYTES = 1 << 30  # a bundle of 1 GiB is far beyond any catalog; more is a gzip bomb


def _gunzip(raw: bytes, path) -> bytes:
    """A gzip-compressed bundle (e.g. the repository's reports/samples/*.json.gz, the committed GPU run),
    read as the JSON it holds; the decompressed size is capped."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(raw, MAX_GUNZIPPED_BYTES)
        if inflater.unconsumed_tail:
            raise BundleError(path, [f"gzip: more than {MAX_GUNZIPPED_BYTES} bytes when decompressed "
                                     "(expected a crossdev.bundle)"])
        out += inflater.flush()
    except zlib.error as e:
        raise BundleError(path, [f"gzip: cannot decompress ({e}); expected a gzip-compressed crossdev.bundle"]) from None
    if not inflater.eof:
        raise BundleError(path, ["gzip: the stream is truncated (expected a complete gzip-compressed bundle)"])
    return out


def read_bundle_text(path) -> str:
    """A bundle file's JSON text: gunzipped when it is gzip-compressed, decoded as UTF-8."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise BundleError(path, [f"cannot read: {e.strerror}"]) from None
    if raw[:2] == _GZIP_MAGIC:
        raw = _gunzip(raw, path)
    if not raw.strip():
        raise BundleError(path, ["empty file (expected a crossdev.bundle JSON document)"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BundleError(path, [f"byte {e.start}: not UTF-8 text"]) from None
    return text


def load_bundles(path) -> List[Bundle]:
    """Every bundle in the file: a crossdev.bundle, or each bundle of a crossdev.bundle_set."""
    return parse_bundles(read_bundle_text(path), str(path))


def load_bundle(path) -> Bundle:
    """Exactly one crossdev.bundle (a bundle set is refused: see load_bundles)."""
    return parse_bundle(read_bundle_text(path), str(path))


class NonFinite(float):
    """A metric the writer spelled null: a NaN or an infinity, which one is not recorded.

    It behaves as a NaN in arithmetic and comparisons; reports show it as "non-finite"."""

    def __new__(cls):
        return super().__new__(cls, math.nan)

    def __repr__(self) -> str:
        return "NON_FINITE"


NON_FINITE = NonFinite()


def metric(case: Dict[str, Any], name: str) -> Optional[float]:
    """A case metric as a float: None when absent, NON_FINITE when written as null (a NaN or an infinity).

    1e999 in the JSON reads as an infinity; the validator guarantees every other value fits a float."""
    metrics = case.get("metrics", {})
    if name not in metrics:
        return None
    value = metrics[name]
    return NON_FINITE if value is None else float(value)
