"""Trends across earlier bundles (--history): per runner, real passes and gating cases over time, and each
op's fused kernel at its largest size: its median time relative to the first run that has it."""
import math
from collections import OrderedDict
from types import SimpleNamespace

from crossdev.report.bench import FUSED_IMPLS, TRIAD_OP, build_bench_table
from crossdev.report.merge import Report, RunnerCounts
from crossdev.report.views.h import el, join, table
from crossdev.report.views.svg import COLORS, line_chart


def _counts(bundle) -> RunnerCounts:
    counts = RunnerCounts()
    for case in bundle.cases:
        counts.add(case)
    return counts


def render(report: Report):
    if not report.history:
        return None
    # Runner labels are device_kind@host(+sim), so the same runner lines up across runs.
    bundles = sorted(report.history + report.runners, key=lambda b: b.created)
    runs = list(OrderedDict.fromkeys(b.created for b in bundles))
    series = OrderedDict()
    for b in bundles:
        series.setdefault(b.label.split("#")[0], {})[b.created] = _counts(b)
    lines, rows = [], []
    for k, (label, by_run) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        lines.append((f"{label} real pass", [by_run[r].real_pass if r in by_run else None for r in runs], color))
        for run, c in by_run.items():
            rows.append([run, label, c.real_pass, c.simulated_pass, c.gating, c.by_status["xfail"], c.total])
    top = max((v for _, values, _ in lines for v in values if v is not None), default=1) or 1
    chart = line_chart(lines, [r[5:16] for r in runs], top * 1.1, lambda v: f"{v:.0f}", aria="real passes per run")
    return join([chart, table(["run (created)", "runner", "pass (real)", "pass (simulated)", "gating", "xfail", "total"],
                              rows, class_="grid", id="trends-table"), *_bench_trends(bundles, runs)])


def _fused_figures(bundle):
    """{(op, pass, size, impl): (seconds, noisy)}: each op's fused kernel ("fused.out", else "fused") at its
    largest size, per pass, in one bundle."""
    board = build_bench_table(SimpleNamespace(runners=[bundle]))
    out = {}
    for group, keys in (board.scaling_groups().items() if board else ()):
        if group.op == TRIAD_OP:
            continue
        key = keys[-1]  # sizes in numeric order: the largest
        impl = next((i for i in reversed(FUSED_IMPLS) if (key, i) in board.points), None)
        if impl is not None:
            p = board.points[(key, impl)]
            out[(group.op, group.pass_, key.size, impl)] = (p.seconds, p.noisy)
    return out


def _bench_trends(bundles, runs):
    figures = OrderedDict()  # (runner, op, pass, size, impl) -> {run: (seconds, noisy)}
    for b in bundles:
        for (op, pass_, size, impl), figure in _fused_figures(b).items():
            figures.setdefault((b.label.split("#")[0], op, pass_, size, impl), {})[b.created] = figure
    figures = OrderedDict((k, v) for k, v in figures.items() if len(v) > 1)  # in more than one run
    if not figures:
        return []
    lines, rows = [], []
    for (runner, op, pass_, size, impl), by_run in sorted(figures.items()):
        first = next(by_run[r][0] for r in runs if r in by_run)
        values = [by_run[r][0] / first if r in by_run and first > 0 else None for r in runs]
        if pass_ == "fwd":  # the chart: one line per op's forward (the table has every pass)
            lines.append((op + (f" @ {runner}" if len({f[0] for f in figures}) > 1 else ""), values,
                          COLORS[len(lines) % len(COLORS)]))
        for r in runs:
            if r in by_run:
                seconds, noisy = by_run[r]
                rows.append([r, runner, op, pass_, size, impl, f"{seconds * 1e6:.2f}",
                             f"{seconds / first:.2f}x" if first > 0 else "—", "NOISY" if noisy else ""])
    top = max((v for _, values, _ in lines for v in values if v is not None and math.isfinite(v)), default=1.0)
    chart = line_chart(lines, [r[5:16] for r in runs], max(top, 1.0) * 1.1, lambda v: f"{v:.2f}x",
                       aria="each op's fused kernel time relative to its first run")
    return [el("h3", "Benchmarks: each op's fused kernel at its largest size, time relative to its first run (fwd)"),
            chart if lines else None, el("details", el("summary", "Every figure"),
                      table(["run (created)", "runner", "op", "pass", "size", "impl", "median µs", "of the first run",
                             "CV > 5%"], rows, class_="grid", id="bench-trends-table"))]
