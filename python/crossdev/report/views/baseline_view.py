"""This run's benchmarks against a baseline (`crossdev report --baseline OLD`): bench-gate's verdict document,
row for row (its verdict, absolute change, change against the run's drift, U-test p-value, CV, repetitions and
reason), regressions first, and each runner's drift and run-to-run spread (bench_gate.drift_summary); each
regression or improvement is also drawn on its op's scaling chart (bench_view)."""
from crossdev.bench_gate import UTEST_MIN_REPETITIONS, drift_summary, min_two_sided_pvalue
from crossdev.report.bench import build_bench_table
from crossdev.report.bench_baseline import FLAGGED, VERDICT_ORDER
from crossdev.report.views.bench_view import anchor
from crossdev.report.views.h import el, join, table, td, tr

_VERDICT_CLASS = {"regression": "st-bad", "improvement": "st-ok"}


def _ns(value) -> str:
    if value is None:
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} ns"


def badge(result) -> el:
    """The header's badge: bench-gate's verdict against the baseline."""
    counts = result.counts()
    if result.verdict == "regression":
        return el("span", f"benchmarks: {counts.get('regression', 0)} regression(s) vs baseline",
                  class_="verdict badge st-bad", id="bench-verdict")
    return el("span", "benchmarks: no regression vs baseline", class_="verdict badge st-ok", id="bench-verdict")


def render(report):
    if report.baseline_error is not None:
        return el("pre", report.baseline_error.message, class_="warn", id="baseline-error")
    result = report.baseline
    if result is None:
        return None
    o = result.options
    counts = result.counts()
    board = build_bench_table(report)
    where = board.point_names() if board else {}
    rows = []
    for runner, b in result.rows():
        spot = where.get((runner, b["name"]))
        name = el("code", b["name"])
        if spot is not None and b["verdict"] in FLAGGED:
            name = el("a", name, href="#" + anchor(spot[0].scaling()))
        rows.append((tr([td(name), runner, td(el("span", b["verdict"], class_=f"badge {_VERDICT_CLASS.get(b['verdict'], 'st-sk')}")),
                        _ns(b["baseline_median_ns"]), _ns(b["current_median_ns"]),
                        "—" if b["change"] is None else f"{b['change']:+.1%}",
                        "—" if b.get("relative_change") is None else f"{b['relative_change']:+.1%}",
                        "—" if b["pvalue"] is None else f"{b['pvalue']:.3g}",
                        "—" if b.get("cv") is None else f"{b['cv']:.1%}",
                        f"{b['repetitions'][0]}/{b['repetitions'][1]}", b["reason"]],
                       class_=f"verdict-{b['verdict']}", data_verdict=b["verdict"], data_name=b["name"]), b["verdict"]))
    parts = [el("p", el("strong", f"bench-gate: {result.verdict}"),
                f" against baseline {result.path}: metric {o.metric}, a regression is p < {o.alpha:g} (two-sided "
                f"Mann-Whitney U over the repetitions) and more than {o.threshold:.0%} slower"
                + (" against the run's drift (the median change of its ATen, torch.compile and triad rows), the row "
                   f"and the median of its op/impl's rows both beyond {o.drift_z:g} run-to-run spreads (a row alone is "
                   f"not judged); nothing is judged above a spread of ±{o.max_spread:.0%}. "
                   if o.drift == "relative" else f"; noisy above CV {o.max_cv:.0%} (not judged). ")
                + ", ".join(f"{counts[v]} {v}" for v in VERDICT_ORDER if counts.get(v)) + ". "
                "The same decision as `crossdev bench-gate --baseline " + result.path + "`.", id="baseline-summary"),
             el("ul", *[el("li", f"{runner}: " + drift_summary(run.get("drift"), doc))
                        for runner, doc in result.documents for run in doc["runs"]], id="baseline-drift")]
    unjudgeable = counts.get("insufficient_repetitions", 0)
    if unjudgeable and unjudgeable == sum(counts.values()) - counts.get("new", 0) - counts.get("missing", 0):
        n, m = next(b["repetitions"] for _, b in result.rows() if b["verdict"] == "insufficient_repetitions")
        parts.append(el("p", f"bench-gate judges none of these benchmarks: with the repetitions these runs have, "
                             f"the U test cannot reach p < {o.alpha:g} (the smallest two-sided p with {n} and {m} "
                             f"repetitions is {min_two_sided_pvalue(max(n, 1), max(m, 1)):.2g}; the test needs at "
                             f"least {UTEST_MIN_REPETITIONS} each). Rerun both with more --benchmark_repetitions "
                             "(4 each reach p < 0.05; 9+ advised).",
                        class_="warn", id="baseline-unjudged"))
    header = ["benchmark", "runner", "verdict", "baseline", "current", "change", "vs drift", "p-value", "CV", "reps",
              "reason"]
    shown = [row for row, verdict in rows if verdict in FLAGGED]
    rest = [row for row, verdict in rows if verdict not in FLAGGED]
    if shown:
        parts.append(table(header, shown, class_="grid", id="baseline-table"))
    else:
        parts.append(el("p", "bench-gate flags no benchmark: no regression and no improvement.", class_="ok-note"))
    if rest:
        parts.append(el("details", el("summary", f"The other {len(rest)} benchmark(s): "
                                      + ", ".join(f"{counts[v]} {v}" for v in VERDICT_ORDER
                                                  if counts.get(v) and v not in FLAGGED)),
                        table(header, rest, class_="grid", id="baseline-rest")))
    return join(parts)
