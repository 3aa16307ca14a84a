"""`crossdev bench-gate`: the performance regression gate; compares Google Benchmark runs with a baseline.

usage: crossdev bench-gate --baseline BASE.json CURRENT.json... [--threshold 0.05]
           [--alpha 0.05] [--metric real_time|cpu_time] [--verdict-json FILE] [--markdown FILE]

Inputs are Google Benchmark JSON files (--benchmark_out_format=json), crossdev bundles that
embed one under `benchmarks`, or bundle sets (`crossdev merge`), in which each bundle with
benchmarks is one current run (a baseline set must hold exactly one). As in Google Benchmark's
tools/compare.py, the repetitions of a benchmark (entries with run_type "iteration" sharing a name
and time unit) are its samples, and a two-sided Mann-Whitney U test decides whether baseline and
current differ. A benchmark is a regression only when BOTH hold:
  * the difference is significant:   p < alpha
  * it is large enough to matter:     median(current) / median(baseline) - 1 > threshold
A run with too few repetitions for the U test to ever reach p < alpha (the smallest two-sided
p-value with n and m samples is 2 / C(n + m, n)) is reported as insufficient_repetitions and
never fails the gate: rerun with --benchmark_repetitions (>= 4 each; 9+ as compare.py advises).
A benchmark whose repetitions vary too much (coefficient of variation above --max-cv, default 0.05,
in either run) is `noisy`: it is never judged a regression or an improvement, and its reason says
what the U test and the threshold would have said.

Exit codes: 0 no significant regression, 1 at least one, 2 bad input (the message names the
file, and line:column for JSON syntax errors). Writes a machine-readable verdict (--verdict-json,
schema "crossdev.bench_gate" v1) and a Markdown table (--markdown; also printed).
"""
import gzip
import json
import math
import re
import statistics
import sys
import zlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from crossdev._command import ArgumentParser

PROG = "crossdev bench-gate"
SCHEMA = "crossdev.bench_gate"
SCHEMA_VERSION = 1
UTEST_MIN_REPETITIONS = 2  # tools/compare.py's floor; below it no test is attempted
_TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
_REQUIRED_KEYS = ("name", "real_time", "cpu_time", "time_unit")


class GateInputError(Exception):
    """Bad input: the message starts with the file (and line:column where known)."""


@dataclass
class Series:
    """The repetitions of one benchmark in one run, in nanoseconds."""
    name: str
    real_ns: List[float] = field(default_factory=list)
    cpu_ns: List[float] = field(default_factory=list)
    error: Optional[str] = None


@dataclass
class Run:
    path: str
    series: Dict[str, Series]


def _load_json(path: str):
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        if raw[:2] == b"\x1f\x8b":  # a gzip-compressed bundle, as crossdev.report reads them
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except OSError as exc:  # gzip.BadGzipFile and EOFError are bad input too
        raise GateInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise GateInputError(f"{path}: gzip: cannot decompress ({exc}); expected a gzip-compressed bundle") from None
    except UnicodeDecodeError as exc:
        raise GateInputError(f"{path}: byte {exc.start}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise GateInputError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


BUNDLE_SET = "crossdev.bundle_set"


def load_runs(path: str) -> List[Run]:
    """The runs a file holds: one, or one per bundle with benchmarks in a bundle set."""
    doc = _load_json(path)
    if not (isinstance(doc, dict) and doc.get("schema") == BUNDLE_SET):
        return [_run_of(doc, path, path)]
    entries = doc.get("bundles")
    if not isinstance(entries, list):
        raise GateInputError(f"{path}: a {BUNDLE_SET} without a `bundles` list (expected the output of "
                             "crossdev merge)")
    runs = []
    for i, entry in enumerate(entries):
        bundle = entry.get("bundle") if isinstance(entry, dict) else None
        if not isinstance(bundle, dict):
            raise GateInputError(f"{path}: bundles[{i}]: expected an object with `source` and `bundle`")
        if bundle.get("benchmarks") is None:
            continue  # this runner ran no benchmarks; the others are gated
        source = entry.get("source") if isinstance(entry.get("source"), str) else f"bundles[{i}]"
        runs.append(_run_of(bundle["benchmarks"], f"{source} (in {path})", f"{path}: bundles[{i}].bundle.benchmarks"))
    if not runs:
        raise GateInputError(f"{path}: no bundle of the set embeds benchmark results (every `benchmarks` is null)")
    return runs


def load_run(path: str) -> Run:
    """One run: a Google Benchmark JSON file, a bundle that embeds one, or a bundle set with one such bundle."""
    runs = load_runs(path)
    if len(runs) != 1:
        raise GateInputError(f"{path}: a {BUNDLE_SET} with {len(runs)} bundles that embed benchmark results "
                             "(expected exactly one run here)")
    return runs[0]


def run_from_document(doc, run_name: str, path: str) -> Run:
    """One run from a parsed document (Google Benchmark JSON, or a bundle embedding one), as load_run reads
    a file: `crossdev report --baseline` gates the bundles it already holds with the same compare()."""
    return _run_of(doc, run_name, path)


def _run_of(doc, run_name: str, path: str) -> Run:
    """The series of one run; `path` starts every error message."""
    if isinstance(doc, dict) and doc.get("schema") == "crossdev.bundle":
        doc = doc.get("benchmarks")
        if doc is None:
            raise GateInputError(f"{path}: the bundle embeds no benchmark results (`benchmarks` is null)")
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise GateInputError(f"{path}: expected a Google Benchmark JSON object with a `benchmarks` list "
                             "(--benchmark_out_format=json), a crossdev bundle embedding one, or a "
                             f"{BUNDLE_SET} of such bundles")
    series: Dict[str, Series] = {}
    for index, entry in enumerate(doc["benchmarks"]):
        where = f"{path}: benchmarks[{index}]"
        if not isinstance(entry, dict):
            raise GateInputError(f"{where}: expected an object, got {type(entry).__name__}")
        if entry.get("run_type", "iteration") == "aggregate":
            continue  # mean/median/stddev are derived; the U test needs the repetitions
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise GateInputError(f"{where}: expected a non-empty string `name`")
        s = series.setdefault(name, Series(name))
        if entry.get("error_occurred"):
            s.error = str(entry.get("error_message", "error_occurred"))
            continue
        for key in _REQUIRED_KEYS:
            if key not in entry:
                raise GateInputError(f"{where} ({name}): missing key '{key}'")
        unit = entry["time_unit"]
        if unit not in _TIME_UNIT_NS:
            raise GateInputError(f"{where} ({name}): time_unit '{unit}': expected one of {', '.join(_TIME_UNIT_NS)}")
        for key in ("real_time", "cpu_time"):
            value = entry[key]
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise GateInputError(f"{where} ({name}): `{key}` must be a finite number >= 0, got {value!r}")
        s.real_ns.append(entry["real_time"] * _TIME_UNIT_NS[unit])
        s.cpu_ns.append(entry["cpu_time"] * _TIME_UNIT_NS[unit])
    return Run(run_name, series)


def min_two_sided_pvalue(n: int, m: int) -> float:
    """Smallest p-value an exact two-sided U test can give with n and m samples."""
    return min(1.0, 2.0 / math.comb(n + m, n))


def utest_pvalue(a: List[float], b: List[float]) -> float:
    from scipy.stats import mannwhitneyu  # as tools/compare.py; imported late so bad input exits 2 without scipy
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


@dataclass
class Options:
    threshold: float = 0.05
    alpha: float = 0.05
    metric: str = "real_time"
    max_cv: float = 0.05


@dataclass
class Comparison:
    name: str
    baseline: Optional[List[float]]
    current: Optional[List[float]]
    baseline_error: Optional[str] = None
    current_error: Optional[str] = None
    change: Optional[float] = None      # median(current) / median(baseline) - 1
    pvalue: Optional[float] = None
    cv: Optional[float] = None          # the larger coefficient of variation of the two runs
    verdict: str = ""
    reason: str = ""


# Verdict rules, first match wins: (verdict, applies, reason). Only "regression" fails the gate.
Rule = Tuple[str, Callable[[Comparison, Options], bool], Callable[[Comparison, Options], str]]
RULES: List[Rule] = [
    ("missing", lambda c, o: c.current is None and c.current_error is None,
     lambda c, o: "in the baseline, not in the current run"),
    ("new", lambda c, o: c.baseline is None and c.baseline_error is None,
     lambda c, o: "in the current run, not in the baseline"),
    ("error", lambda c, o: c.baseline_error is not None or c.current_error is not None,
     lambda c, o: "benchmark reported an error: " + (c.current_error or c.baseline_error or "")),
    ("insufficient_repetitions",
     lambda c, o: min(len(c.baseline), len(c.current)) < UTEST_MIN_REPETITIONS
     or min_two_sided_pvalue(len(c.baseline), len(c.current)) >= o.alpha,
     lambda c, o: f"{len(c.baseline)} vs {len(c.current)} repetitions: the U test cannot reach p < {o.alpha:g}"),
    ("noisy", lambda c, o: c.cv is not None and c.cv > o.max_cv,
     lambda c, o: f"CV {c.cv:.1%} > {o.max_cv:.0%}: not judged; the U test and threshold alone would say "
                  + _would_be(c, o)),
    ("regression", lambda c, o: c.pvalue < o.alpha and c.change > o.threshold,
     lambda c, o: f"{c.change:+.1%} slower, p = {c.pvalue:.3g}"),
    ("improvement", lambda c, o: c.pvalue < o.alpha and c.change < -o.threshold,
     lambda c, o: f"{-c.change:.1%} faster, p = {c.pvalue:.3g}"),
    ("unchanged", lambda c, o: True,
     lambda c, o: (f"p = {c.pvalue:.3g} >= {o.alpha:g}" if c.pvalue >= o.alpha
                   else f"significant but within {o.threshold:.0%} ({c.change:+.1%})")),
]


def _would_be(c: "Comparison", o: Options) -> str:
    if c.pvalue < o.alpha and c.change > o.threshold:
        return f"regression ({c.change:+.1%}, p = {c.pvalue:.3g})"
    if c.pvalue < o.alpha and c.change < -o.threshold:
        return f"improvement ({c.change:+.1%}, p = {c.pvalue:.3g})"
    return f"unchanged ({c.change:+.1%}, p = {c.pvalue:.3g})"


def coefficient_of_variation(samples: List[float]) -> float:
    mean = statistics.mean(samples)
    return statistics.stdev(samples) / mean if len(samples) > 1 and mean > 0 else 0.0


def _samples(series: Optional[Series], metric: str) -> Optional[List[float]]:
    if series is None or series.error is not None:
        return None
    return series.real_ns if metric == "real_time" else series.cpu_ns


def compare(baseline: Run, current: Run, options: Options) -> List[Comparison]:
    names = list(baseline.series) + [n for n in current.series if n not in baseline.series]
    out = []
    for name in names:
        b, c = baseline.series.get(name), current.series.get(name)
        comp = Comparison(name, _samples(b, options.metric), _samples(c, options.metric),
                          b.error if b else None, c.error if c else None)
        if comp.baseline and comp.current:
            base_median = statistics.median(comp.baseline)
            cur_median = statistics.median(comp.current)
            comp.change = cur_median / base_median - 1.0 if base_median > 0 else 0.0
            if min(len(comp.baseline), len(comp.current)) >= UTEST_MIN_REPETITIONS:
                comp.pvalue = utest_pvalue(comp.baseline, comp.current)
                comp.cv = max(coefficient_of_variation(comp.baseline), coefficient_of_variation(comp.current))
        for verdict, applies, reason in RULES:
            if applies(comp, options):
                comp.verdict, comp.reason = verdict, reason(comp, options)
                break
        out.append(comp)
    return out


def _median(values: Optional[List[float]]) -> Optional[float]:
    return statistics.median(values) if values else None


def verdict_document(baseline: Run, results: List[Tuple[Run, List[Comparison]]], options: Options) -> dict:
    counts: Dict[str, int] = {}
    runs = []
    for run, comparisons in results:
        for comp in comparisons:
            counts[comp.verdict] = counts.get(comp.verdict, 0) + 1
        runs.append({
            "current": run.path,
            "benchmarks": [{
                "name": c.name, "verdict": c.verdict, "reason": c.reason,
                "baseline_median_ns": _median(c.baseline), "current_median_ns": _median(c.current),
                "change": c.change, "pvalue": c.pvalue, "cv": c.cv,
                "repetitions": [len(c.baseline or []), len(c.current or [])],
            } for c in comparisons],
        })
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "verdict": "regression" if counts.get("regression") else "pass",
        "baseline": baseline.path, "threshold": options.threshold, "alpha": options.alpha,
        "metric": options.metric, "max_cv": options.max_cv, "counts": counts, "runs": runs,
    }


def _fmt_ns(value: Optional[float]) -> str:
    if value is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} ns"


def _md_escape(text: str) -> str:
    return re.sub(r"([|\\`*_<>])", r"\\\1", text)


def markdown(doc: dict) -> str:
    lines = [f"### Benchmark gate: **{doc['verdict']}**", "",
             f"baseline `{_md_escape(doc['baseline'])}`, metric {doc['metric']}, threshold "
             f"{doc['threshold']:.0%}, alpha {doc['alpha']:g}, noisy above CV {doc['max_cv']:.0%}; "
             + ", ".join(f"{k}: {v}" for k, v in sorted(doc["counts"].items())), ""]
    for run in doc["runs"]:
        lines += [f"current `{_md_escape(run['current'])}`", "",
                  "| benchmark | verdict | baseline | current | change | p-value | CV | reps | reason |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for b in run["benchmarks"]:
            change = "-" if b["change"] is None else f"{b['change']:+.1%}"
            pvalue = "-" if b["pvalue"] is None else f"{b['pvalue']:.3g}"
            cv = "-" if b.get("cv") is None else f"{b['cv']:.1%}"
            lines.append(f"| `{_md_escape(b['name'])}` | {b['verdict']} | {_fmt_ns(b['baseline_median_ns'])} | "
                         f"{_fmt_ns(b['current_median_ns'])} | {change} | {pvalue} | {cv} | "
                         f"{b['repetitions'][0]}/{b['repetitions'][1]} | {_md_escape(b['reason'])} |")
        lines.append("")
    return "\n".join(lines)


def _write(path: str, text: str) -> None:
    # Write to a temp name and rename, so a reader never sees half a verdict.
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    import os
    os.replace(tmp, path)




def main(argv: Optional[List[str]] = None) -> int:
    p = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("--baseline", required=True, metavar="FILE", help="Google Benchmark JSON (or bundle) of the baseline")
    p.add_argument("current", nargs="+", metavar="CURRENT", help="Google Benchmark JSON (or bundle) to gate")
    p.add_argument("--threshold", type=float, default=0.05, help="relative slowdown that counts (default 0.05)")
    p.add_argument("--alpha", type=float, default=0.05, help="U test significance level (default 0.05)")
    p.add_argument("--metric", choices=("real_time", "cpu_time"), default="real_time")
    p.add_argument("--max-cv", type=float, default=0.05,
                   help="coefficient of variation above which a benchmark is noisy and not judged (default 0.05)")
    p.add_argument("--filter", metavar="REGEX", help="gate only benchmarks whose name matches")
    p.add_argument("--verdict-json", metavar="FILE", help="write the machine-readable verdict here")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown table here")
    args = p.parse_args(argv)
    if not 0 < args.threshold < 10:
        p.error(f"--threshold: expected a fraction such as 0.05, got {args.threshold}")
    if not 0 < args.alpha < 1:
        p.error(f"--alpha: expected a probability in (0, 1), got {args.alpha}")
    try:
        name_filter = re.compile(args.filter) if args.filter else None
    except re.error as exc:
        p.error(f"--filter: invalid regular expression: {exc}")

    if not args.max_cv > 0:
        p.error(f"--max-cv: expected a fraction such as 0.05, got {args.max_cv}")
    options = Options(args.threshold, args.alpha, args.metric, args.max_cv)
    try:
        baseline = load_run(args.baseline)
        currents = [run for path in args.current for run in load_runs(path)]
    except GateInputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    if name_filter:
        for run in [baseline, *currents]:
            run.series = {k: v for k, v in run.series.items() if name_filter.search(k)}
    results = [(run, compare(baseline, run, options)) for run in currents]
    doc = verdict_document(baseline, results, options)
    table = markdown(doc)
    print(table)
    if args.verdict_json:
        _write(args.verdict_json, json.dumps(doc, indent=2) + "\n")
    if args.markdown:
        _write(args.markdown, table + "\n")
    return 1 if doc["verdict"] == "regression" else 0


if __name__ == "__main__":
    sys.exit(main())
