"""Every case of every suite, one collapsible table per suite (the generic view: always works)."""
from collections import defaultdict

from crossdev.report.bundle import metric
from crossdev.report.merge import Report
from crossdev.report.schema import GATING_STATUSES
from crossdev.report.views.h import Markup, el, execution_badge, fmt_number, join, status_badge, table, td, tr


def _metrics(case) -> str:
    return ", ".join(f"{k}={fmt_number(metric(case, k))}" for k in case.get("metrics", {}))


def _case_row(runner, case) -> Markup:
    return tr([
        runner.label,
        td(el("code", case["id"])),
        status_badge(case["status"]),
        execution_badge(case["execution"]),
        case.get("device", ""),
        td(el("small", case.get("source", ""))),
        td(el("small", _metrics(case))),
        case.get("message", ""),
    ], class_=f"st-row-{case['status']}", data_execution=case["execution"])


def render(report: Report):
    by_suite = defaultdict(list)
    for runner, case in report.cases():
        by_suite[case["suite"]].append((runner, case))
    if not by_suite:
        return None
    parts = [el("input", type="search", class_="filter", placeholder="filter cases (id, status, runner...)",
                aria_label="filter cases")]
    for suite in sorted(by_suite):
        cases = by_suite[suite]
        statuses = defaultdict(int)
        for _, c in cases:
            statuses[c["status"]] += 1
        summary = f"{suite}: {len(cases)} case(s) — " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
        rows = [_case_row(r, c) for r, c in cases]
        parts.append(el("details", el("summary", summary),
                        table(["runner", "case", "status", "execution", "device", "source", "metrics", "reason"],
                              rows, class_="grid cases"),
                        open=any(s in statuses for s in GATING_STATUSES)))
    return join(parts)
