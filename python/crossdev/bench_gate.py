"""`crossdev bench-gate`: the performance regression gate; compares Google Benchmark runs with a baseline.

usage: crossdev bench-gate --baseline BASE.json CURRENT.json... [--threshold 0.05]
           [--alpha 0.05] [--metric real_time|cpu_time] [--max-cv 0.05] [--drift relative|absolute]
           [--drift-z 4] [--max-spread 0.5] [--filter REGEX] [--verdict-json FILE] [--markdown FILE]

Inputs are Google Benchmark JSON files (--benchmark_out_format=json), crossdev bundles that
embed one under `benchmarks`, or bundle sets (`crossdev merge`), in which each bundle with
benchmarks is one current run (a baseline set must hold exactly one). As in Google Benchmark's
tools/compare.py, the repetitions of a benchmark (entries with run_type "iteration" sharing a name
and time unit) are its samples, and a two-sided Mann-Whitney U test decides whether baseline and
current differ. A run with too few repetitions for the U test to ever reach p < alpha (the smallest
two-sided p-value with n and m samples is 2 / C(n + m, n)) is reported as insufficient_repetitions
and never fails the gate: rerun with --benchmark_repetitions (>= 4 each; 9+ as compare.py advises).

The absolute rule (--drift absolute; schema v1's only rule) judges each benchmark on its own times.
It is a regression only when BOTH hold:
  * the difference is significant:   p < alpha
  * it is large enough to matter:     median(current) / median(baseline) - 1 > threshold
and a benchmark whose repetitions vary too much (coefficient of variation above --max-cv, default
0.05, in either run) is `noisy`: never judged, its reason says what the U test and threshold would say.

The relative rule (--drift relative, the default) exists because two runs of one build on a shared
host differ by far more than one run's repetitions vary (docs/benchmarks.md, "A slowed op, measured":
20-49% on many rows), which the U test over one run's repetitions cannot see. It measures that drift
in the runs themselves (names are "op/impl/dtype/size/device/pass"):
  * drift (shift): the median, over the anchor rows, of log(median current / median baseline). The
    anchors are the rows crossdev's code does not own, measured in the same run: the peers a user
    would pick instead (impl aten, aten.out, compile) and the STREAM triad (op stream_triad). A host
    30% slower for the whole run moves them as much as the fused kernels, and the ratio stays.
  * spread: 1.4826 x the median, over every row, of |log change - shift|: how far a row moves between
    the runs beyond the shift (a robust sigma of the run-to-run noise, which a slowed minority of
    rows barely moves).
Every row is judged on its change against the drift (relative_change), with the U test on the
baseline's repetitions against the current's divided by the drift. It is a regression (improvement
mirrored) when that U test says p < alpha, the change is beyond the threshold, AND its op/impl (every
size and pass of one kernel: the rows one change of code moves together; two rows at least) moved, by the
median of its n rows, beyond the margin, drift_z spreads (default 4), and the row itself moved beyond it
too (a group of two is the mean of its rows: one wild row must not carry a quiet one). The median is over
the rows whose CV is at most 5 x --max-cv (25%): a row stalled inside its repetitions moves its median
without measuring the kernel. Two things the host does decide this (docs/benchmarks.md, "Two make-report
bundles"): a row alone is never judged, since two processes of one build on this 2-core host put single rows
in modes up to 2x apart (+67% and +103% measured, each with a CV under 3%), which one run a side cannot
tell from a regression; and the margin of a group is not divided by sqrt(n), since a host mode moves a
kernel's rows together (the same build moved rms_norm's 9 ATen rows by -14% as one, 3.2 spreads).
except when its own case (op/dtype/size/device/pass: the impls timed one after the other) has an anchor
that moved beyond the margin the same way, in that case only (its op/impl's median did not): that
is the host stalling during the case (this VM stalls for seconds), and such a row is noisy and left
out of its group's median. An op slower in every impl and case is not a stall and is judged.
A row that passes the U test and the threshold but not its group's margin, or whose CV is above --max-cv, is
`noisy` (its reason says by how much it moved and why it was not judged). When the spread itself is
above --max-spread (default 0.5, +-50%), no row is judged: all are noisy (the host drifted too much
for any single comparison). An anchor's own regression (ATen slower after a torch upgrade) is judged
by the same rule: one op's ATen rows stand out of the median of every anchor. A uniform slowdown of
every anchor is indistinguishable from a slower host; each row's absolute verdict and change stay in
the verdict (absolute_verdict, change) for that. Runs with fewer than 4 anchor rows or 8 rows in both
(crossdev_bench's own cases, hand-made files) have no drift estimate: the absolute rule decides, and
the run's drift note says so.

Exit codes: 0 no significant regression, 1 at least one, 2 bad input (the message names the
file, and line:column for JSON syntax errors). Writes a machine-readable verdict (--verdict-json,
schema "crossdev.bench_gate" v2: v1's fields, each run's `drift` {mode, shift, spread, row_margin,
anchors, rows, note} as fractions, each benchmark's relative_change, relative_pvalue, group,
group_change, group_margin, absolute_verdict and absolute_reason; the options drift, drift_z and
max_spread) and a Markdown table (--markdown; also printed).
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
SCHEMA_VERSION = 2  # v2: the drift (run-level), relative_change, group_*, absolute_verdict (issue 52)
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


DRIFT_MODES = ("relative", "absolute")
# Rows whose code crossdev does not own: the same-run peers a user would pick instead and the STREAM triad
# (the roofline). Their median change between the runs is the drift the host added to the whole run.
ANCHOR_IMPLS = ("aten", "aten.out", "compile")
TRIAD_OP = "stream_triad"
MIN_ANCHORS = 4     # fewer anchor rows in both runs: no drift estimate, the absolute rule decides
MIN_ROWS = 8        # fewer rows compared: no spread estimate, the absolute rule decides
MAD_TO_SIGMA = 1.4826
GROUP_CV_FACTOR = 5  # rows with a CV above 5 x --max-cv (25%) do not count towards their op/impl's median


@dataclass
class Options:
    threshold: float = 0.05
    alpha: float = 0.05
    metric: str = "real_time"
    max_cv: float = 0.05
    drift: str = "relative"   # "absolute": v1's rule, every row on its own absolute times
    drift_z: float = 4.0      # the margin an op/impl and its rows must pass, in run-to-run spreads
    max_spread: float = 0.5   # a run-to-run spread above this (+50%): nothing is judged


def is_anchor(name: str) -> bool:
    parts = name.split("/")
    return len(parts) >= 2 and (parts[0] == TRIAD_OP or parts[1] in ANCHOR_IMPLS)


def group_of(name: str) -> str:
    """op/impl: the rows one kernel stands behind (every size, dtype and pass of it)."""
    return "/".join(name.split("/")[:2])


@dataclass
class Drift:
    """What the host did to one current run as a whole, from the run's own rows (log-space medians)."""
    mode: str                         # the rule that decided: "relative", or "absolute" (asked, or no estimate)
    shift: Optional[float] = None     # median over the anchor rows of log(median current / median baseline)
    spread: Optional[float] = None    # 1.4826 x median over every row of |log change - shift|: a row's sigma
    anchors: int = 0
    rows: int = 0
    note: str = ""
    groups: Dict[str, Tuple[float, int]] = field(default_factory=dict)  # op/impl -> (median log change - shift, n)
    rows_rel: Dict[str, float] = field(default_factory=dict)  # name -> log change - shift
    stalled: Dict[str, List[Tuple[str, float]]] = field(default_factory=dict)  # name -> its case's anchors that moved

    def margin(self, options: "Options") -> float:
        """The log change an op/impl's median, and each of its rows, must pass: drift_z spreads, never below the
        threshold (not / sqrt(n): a host mode moves one kernel's rows together)."""
        return max(math.log1p(options.threshold), options.drift_z * (self.spread or 0.0))

    def as_dict(self, options: "Options") -> dict:
        frac = lambda v: None if v is None else math.expm1(v)  # noqa: E731
        return {"mode": self.mode, "shift": frac(self.shift), "spread": frac(self.spread),
                "row_margin": frac(self.margin(options)) if self.spread is not None else None,
                "anchors": self.anchors, "rows": self.rows, "note": self.note}


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
    absolute_verdict: str = ""          # the absolute rule's (RULES, schema v1's) verdict on the raw times
    absolute_reason: str = ""
    relative_change: Optional[float] = None   # median(current) / median(baseline) / drift - 1
    relative_pvalue: Optional[float] = None   # U test of baseline against current / drift
    group: str = ""
    group_change: Optional[float] = None      # op/impl's median relative change
    group_margin: Optional[float] = None      # what it must pass to carry its rows


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


def _absolute(comp: Comparison, options: Options) -> None:
    for verdict, applies, reason in RULES:
        if applies(comp, options):
            comp.absolute_verdict, comp.absolute_reason = verdict, reason(comp, options)
            return


def estimate_drift(comparisons: List[Comparison], options: Options) -> Drift:
    """The run's drift (shift, from the anchor rows) and its run-to-run spread (from every row)."""
    logs = {c.name: math.log(statistics.median(c.current) / statistics.median(c.baseline))
            for c in comparisons if c.absolute_verdict not in ("missing", "new", "error")
            and c.baseline and c.current and statistics.median(c.baseline) > 0 and statistics.median(c.current) > 0}
    anchors = [v for name, v in logs.items() if is_anchor(name)]
    drift = Drift("absolute", anchors=len(anchors), rows=len(logs))
    if options.drift == "absolute":
        drift.note = "--drift absolute: every row on its absolute times"
        return drift
    if len(anchors) < MIN_ANCHORS or len(logs) < MIN_ROWS:
        drift.note = (f"{len(anchors)} anchor row(s) (peers {', '.join(ANCHOR_IMPLS)}; the {TRIAD_OP}) and {len(logs)} "
                      f"row(s) in both runs; the drift needs {MIN_ANCHORS} and {MIN_ROWS}: absolute times decide")
        return drift
    drift.mode, drift.shift = "relative", statistics.median(anchors)
    drift.spread = MAD_TO_SIGMA * statistics.median(abs(v - drift.shift) for v in logs.values())
    drift.rows_rel = {name: v - drift.shift for name, v in logs.items()}
    # A row whose own case's anchor moved as far the same way, in that case only (not across the anchor's op/impl),
    # is the host's doing during that case (a stall of this VM lasts seconds: every impl timed in it moves); it is
    # not judged, and does not speak for its group. An op slower in every impl and case is not a stall: judged.
    def medians(names):
        by_group: Dict[str, List[float]] = {}
        for name in names:
            by_group.setdefault(group_of(name), []).append(drift.rows_rel[name])
        return {g: (statistics.median(vs), len(vs)) for g, vs in by_group.items()}

    whole = medians(drift.rows_rel)
    row_margin = drift.margin(options)
    anchors_by_case: Dict[Tuple[str, ...], List[Tuple[str, float]]] = {}
    for name, v in drift.rows_rel.items():
        g_change, _ = whole[group_of(name)]
        if is_anchor(name) and abs(g_change) <= row_margin:
            anchors_by_case.setdefault(case_of(name), []).append((name, v))
    for name, v in drift.rows_rel.items():
        moved = [(other.split("/")[1], math.expm1(w)) for other, w in anchors_by_case.get(case_of(name), [])
                 if other != name and abs(w) > row_margin and (w > 0) == (v > 0)]
        if moved:
            drift.stalled[name] = moved
    # An op/impl's median speaks only for rows measured well enough to move it: a row whose repetitions vary by
    # more than GROUP_CV_FACTOR x --max-cv (a stall inside its repetitions) is left out of it.
    cvs = {c.name: c.cv for c in comparisons}
    drift.groups = medians([name for name in drift.rows_rel if name not in drift.stalled
                            and (cvs.get(name) or 0.0) <= GROUP_CV_FACTOR * options.max_cv])
    return drift


def case_of(name: str) -> Tuple[str, ...]:
    """op/dtype/size/device/pass: the rows timed one after the other on the same inputs."""
    parts = name.split("/")
    return tuple(parts[:1] + parts[2:])


def _relative(c: Comparison, d: Drift, o: Options) -> Tuple[str, str]:
    """The relative rule, after the absolute rule's missing/new/error/insufficient_repetitions."""
    shift, spread = math.expm1(d.shift), math.expm1(d.spread)
    moved = f"{c.relative_change:+.1%} against the run's drift ({shift:+.1%}; {c.change:+.1%} in absolute time)"
    if spread > o.max_spread:
        return "noisy", (f"run-to-run spread ±{spread:.0%} > {o.max_spread:.0%}: not judged; {moved}, "
                         f"p = {c.relative_pvalue:.3g}")
    log_change = math.log1p(c.relative_change)
    margin = d.margin(o)
    g_change, n = d.groups.get(c.group, (0.0, 1))
    g_moved = (f"{c.group} moved {math.expm1(g_change):+.1%} over its {n} rows (margin ±{math.expm1(margin):.0%})"
               if n >= 2 else f"{c.group} has no other row measured well enough to move with it")
    significant = c.relative_pvalue < o.alpha and abs(c.relative_change) > o.threshold
    up = c.relative_change > 0
    # Carried by its op/impl: the median of its rows beyond the margin, and this row beyond it too (a group of two
    # is the mean of its two rows: one wild row must not carry a quiet one). A row alone is never judged.
    by_group = n >= 2 and abs(log_change) > margin and (g_change > margin if up else g_change < -margin)
    if significant and by_group:
        stalled = d.stalled.get(c.name)
        if stalled:  # the same case's peer moved as far the same way: the host during this case, not the kernel
            return "noisy", (f"its case's {', '.join(f'{impl} ({x:+.0%})' for impl, x in stalled)} moved beyond the "
                             f"margin ±{math.expm1(margin):.0%} the same way (the host during this case): not "
                             f"judged; {moved}, p = {c.relative_pvalue:.3g}")
        return ("regression" if up else "improvement"), f"{moved}, p = {c.relative_pvalue:.3g}; {g_moved}"
    if significant and abs(log_change) > margin:
        return "noisy", (f"moved beyond the margin ±{math.expm1(margin):.0%} alone ({g_moved}): a row alone is not "
                         f"judged, one run a side cannot tell it from a mode of the host; {moved}, "
                         f"p = {c.relative_pvalue:.3g}")
    if significant:
        return "noisy", (f"within the run-to-run spread (margin ±{math.expm1(margin):.0%}"
                         + (f" with CV {c.cv:.1%} > {o.max_cv:.0%}" if (c.cv or 0.0) > o.max_cv else "")
                         + (f"; {g_moved}" if n >= 2 else "") + f"): not judged; {moved}, p = {c.relative_pvalue:.3g}")
    if (c.cv or 0.0) > o.max_cv:
        return "noisy", f"CV {c.cv:.1%} > {o.max_cv:.0%}: not judged; {moved}, p = {c.relative_pvalue:.3g}"
    return "unchanged", (f"{moved}, p = {c.relative_pvalue:.3g}" if c.relative_pvalue >= o.alpha
                         else f"significant but within {o.threshold:.0%} ({moved})")


def compare_run(baseline: Run, current: Run, options: Options) -> Tuple[List[Comparison], Drift]:
    """Every benchmark of both runs, judged; and the drift the relative rule took out (mode "absolute" where it
    did not apply)."""
    names = list(baseline.series) + [n for n in current.series if n not in baseline.series]
    out = []
    for name in names:
        b, c = baseline.series.get(name), current.series.get(name)
        comp = Comparison(name, _samples(b, options.metric), _samples(c, options.metric),
                          b.error if b else None, c.error if c else None, group=group_of(name))
        if comp.baseline and comp.current:
            base_median = statistics.median(comp.baseline)
            cur_median = statistics.median(comp.current)
            comp.change = cur_median / base_median - 1.0 if base_median > 0 else 0.0
            if min(len(comp.baseline), len(comp.current)) >= UTEST_MIN_REPETITIONS:
                comp.pvalue = utest_pvalue(comp.baseline, comp.current)
                comp.cv = max(coefficient_of_variation(comp.baseline), coefficient_of_variation(comp.current))
        _absolute(comp, options)
        comp.verdict, comp.reason = comp.absolute_verdict, comp.absolute_reason
        out.append(comp)
    drift = estimate_drift(out, options)
    if drift.mode != "relative":
        return out, drift
    scale = math.exp(-drift.shift)
    for comp in out:
        if comp.absolute_verdict in ("missing", "new", "error", "insufficient_repetitions") or comp.change is None:
            continue
        comp.relative_change = (comp.change + 1.0) * scale - 1.0
        comp.relative_pvalue = utest_pvalue(comp.baseline, [t * scale for t in comp.current])
        if comp.group in drift.groups:
            g_change, n = drift.groups[comp.group]
            comp.group_change, comp.group_margin = math.expm1(g_change), math.expm1(drift.margin(options))
        if statistics.median(comp.baseline) <= 0 or comp.relative_change <= -1.0:
            continue  # a zero median: no log change; the absolute verdict stands
        comp.verdict, comp.reason = _relative(comp, drift, options)
    return out, drift


def compare(baseline: Run, current: Run, options: Options) -> List[Comparison]:
    return compare_run(baseline, current, options)[0]


def _median(values: Optional[List[float]]) -> Optional[float]:
    return statistics.median(values) if values else None


def verdict_document(baseline: Run, results: List[tuple], options: Options) -> dict:
    """results: (run, comparisons) or (run, comparisons, drift) per current run."""
    counts: Dict[str, int] = {}
    runs = []
    for result in results:
        run, comparisons = result[0], result[1]
        drift = result[2] if len(result) > 2 else Drift("absolute", note="compared without a drift estimate")
        for comp in comparisons:
            counts[comp.verdict] = counts.get(comp.verdict, 0) + 1
        runs.append({
            "current": run.path,
            "drift": drift.as_dict(options),
            "benchmarks": [{
                "name": c.name, "verdict": c.verdict, "reason": c.reason,
                "baseline_median_ns": _median(c.baseline), "current_median_ns": _median(c.current),
                "change": c.change, "pvalue": c.pvalue, "cv": c.cv,
                "relative_change": c.relative_change, "relative_pvalue": c.relative_pvalue,
                "group": c.group, "group_change": c.group_change, "group_margin": c.group_margin,
                "absolute_verdict": c.absolute_verdict, "absolute_reason": c.absolute_reason,
                "repetitions": [len(c.baseline or []), len(c.current or [])],
            } for c in comparisons],
        })
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "verdict": "regression" if counts.get("regression") else "pass",
        "baseline": baseline.path, "threshold": options.threshold, "alpha": options.alpha,
        "metric": options.metric, "max_cv": options.max_cv, "drift": options.drift, "drift_z": options.drift_z,
        "max_spread": options.max_spread, "counts": counts, "runs": runs,
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


def _fmt_change(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:+.1%}"


def drift_summary(drift: Optional[dict], options_doc: dict) -> str:
    """One line: which rule decided this run, and the drift and spread it took out."""
    if not drift or drift.get("mode") != "relative":
        return "absolute times decide" + (f" ({drift['note']})" if drift and drift.get("note") else "")
    head = (f"drift {drift['shift']:+.1%} (median of {drift['anchors']} anchor rows: peers and triad), run-to-run "
            f"spread ±{drift['spread']:.1%} over {drift['rows']} rows; ")
    max_spread = options_doc.get("max_spread", 0.5)
    if drift["spread"] > max_spread:
        return head + f"above ±{max_spread:.0%}: no row is judged (rerun both on a quieter host)"
    return head + (f"a row is judged against the drift, with its op/impl: both beyond ±{drift['row_margin']:.0%} "
                   f"({options_doc.get('drift_z', 4):g} spreads; a row alone is not judged); nothing is judged above a "
                   f"spread of ±{max_spread:.0%}")


def markdown(doc: dict) -> str:
    lines = [f"### Benchmark gate: **{doc['verdict']}**", "",
             f"baseline `{_md_escape(doc['baseline'])}`, metric {doc['metric']}, threshold "
             f"{doc['threshold']:.0%}, alpha {doc['alpha']:g}, noisy above CV {doc['max_cv']:.0%}, "
             f"rule {doc.get('drift', 'absolute')}; "
             + ", ".join(f"{k}: {v}" for k, v in sorted(doc["counts"].items())), ""]
    for run in doc["runs"]:
        lines += [f"current `{_md_escape(run['current'])}`: {_md_escape(drift_summary(run.get('drift'), doc))}", "",
                  "| benchmark | verdict | baseline | current | change | vs drift | p-value | CV | reps | reason |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        for b in run["benchmarks"]:
            pvalue = "-" if b["pvalue"] is None else f"{b['pvalue']:.3g}"
            cv = "-" if b.get("cv") is None else f"{b['cv']:.1%}"
            lines.append(f"| `{_md_escape(b['name'])}` | {b['verdict']} | {_fmt_ns(b['baseline_median_ns'])} | "
                         f"{_fmt_ns(b['current_median_ns'])} | {_fmt_change(b['change'])} | "
                         f"{_fmt_change(b.get('relative_change'))} | {pvalue} | {cv} | "
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
    p.add_argument("--drift", choices=DRIFT_MODES, default="relative",
                   help="relative (default): judge each row against the run's drift (its peers' and triad's median "
                        "change) and run-to-run spread; absolute: schema v1's rule, each row on its own times")
    p.add_argument("--drift-z", type=float, default=4.0,
                   help="the margin an op/impl's median and its rows must pass, in run-to-run spreads (default 4)")
    p.add_argument("--max-spread", type=float, default=0.5,
                   help="run-to-run spread above which nothing is judged (default 0.5: ±50%%)")
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
    if not args.drift_z > 0:
        p.error(f"--drift-z: expected a positive number such as 3, got {args.drift_z}")
    if not args.max_spread > 0:
        p.error(f"--max-spread: expected a fraction such as 0.5, got {args.max_spread}")
    options = Options(args.threshold, args.alpha, args.metric, args.max_cv, args.drift, args.drift_z, args.max_spread)
    try:
        baseline = load_run(args.baseline)
        currents = [run for path in args.current for run in load_runs(path)]
    except GateInputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    if name_filter:
        for run in [baseline, *currents]:
            run.series = {k: v for k, v in run.series.items() if name_filter.search(k)}
    results = [(run, *compare_run(baseline, run, options)) for run in currents]
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
