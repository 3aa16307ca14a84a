"""Trends across earlier bundles (--history): per runner, real passes and gating cases over time."""
from collections import OrderedDict

from crossdev.report.merge import Report, RunnerCounts
from crossdev.report.views.h import join, table
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
                              rows, class_="grid", id="trends-table")])
