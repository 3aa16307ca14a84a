"""`crossdev report NEW --baseline OLD`: each runner's benchmarks against a baseline run's, decided by
bench-gate's own compare_run() (its default rule: each row against the run's drift, with the drift it took out)
and written up by its own verdict_document(): one decision, two views (`crossdev bench-gate`'s Markdown and the
report's HTML). Nothing here judges a benchmark.

The baseline is what `crossdev bench-gate --baseline` accepts: a Google Benchmark JSON file, a bundle that
embeds one, or a bundle set holding exactly one such bundle (gzip-compressed or not). One that cannot be
read is bad input (exit 2), its message naming the file.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from crossdev import bench_gate

# Regressions first, then the other verdicts in bench-gate's own rule order.
VERDICT_ORDER: Tuple[str, ...] = ("regression",) + tuple(v for v, _, _ in bench_gate.RULES if v != "regression")
FLAGGED = ("regression", "improvement")  # drawn on their op's scaling chart


@dataclass
class BaselineComparison:
    path: str
    options: bench_gate.Options
    # (runner label, bench-gate's verdict document for that runner's benchmarks against the baseline)
    documents: List[Tuple[str, dict]] = field(default_factory=list)

    def rows(self) -> List[Tuple[str, dict]]:
        """(runner, benchmark row of the verdict document), regressions first, the largest change first."""
        rows = [(runner, b) for runner, doc in self.documents for run in doc["runs"] for b in run["benchmarks"]]
        return sorted(rows, key=lambda rb: (VERDICT_ORDER.index(rb[1]["verdict"]) if rb[1]["verdict"] in VERDICT_ORDER
                                            else len(VERDICT_ORDER), -abs(rb[1]["change"] or 0.0), rb[0],
                                            rb[1]["name"]))

    def counts(self) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for _, doc in self.documents:
            for verdict, n in doc["counts"].items():
                counts[verdict] = counts.get(verdict, 0) + n
        return counts

    @property
    def verdict(self) -> str:
        """bench-gate's verdict over every runner: "regression" when any document says so, else "pass"."""
        return "regression" if any(doc["verdict"] == "regression" for _, doc in self.documents) else "pass"


def compare_with_baseline(runners, path: str,
                          options: Optional[bench_gate.Options] = None) -> Tuple[Optional[BaselineComparison], Optional[str]]:
    """(the comparison, None) or (None, an error message starting with the file)."""
    options = options or bench_gate.Options()
    try:
        baseline = bench_gate.load_run(path)
        currents = [(r.label, bench_gate.run_from_document(r.benchmarks, r.label, f"{r.path}: benchmarks"))
                    for r in runners if r.benchmarks is not None]
    except bench_gate.GateInputError as exc:
        return None, str(exc)  # it starts with the file: the baseline, or the current bundle at fault
    if not currents:
        return None, f"{path}: no current bundle embeds benchmark results to compare with this baseline"
    result = BaselineComparison(path, options)
    try:
        for label, run in currents:
            result.documents.append((label, bench_gate.verdict_document(
                baseline, [(run, *bench_gate.compare_run(baseline, run, options))], options)))
    except ImportError as exc:
        return None, f"{path}: bench-gate's U test needs scipy ({exc}); pip install scipy"
    return result, None


def comparisons_by_point(report, board) -> Dict[tuple, dict]:
    """(BenchKey, impl) of the board -> its benchmark row of the verdict document, where there is one."""
    if getattr(report, "baseline", None) is None:
        return {}
    names = board.point_names()
    out = {}
    for runner, doc in report.baseline.documents:
        for run in doc["runs"]:
            for b in run["benchmarks"]:
                where = names.get((runner, b["name"]))
                if where is not None:
                    out[where] = b
    return out
