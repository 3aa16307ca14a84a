"""Failure details: every case that gates (fail, xpass, error, crash), with where and why."""
from crossdev.repro import HIDDEN_DETAILS, reproduce_line
from crossdev.report.merge import Report
from crossdev.report.views.h import el, execution_badge, status_badge, table, td


def _details(case) -> str:
    return "; ".join(f"{k}: {v}" for k, v in case.get("details", {}).items() if k not in HIDDEN_DETAILS)


def _reproduce(runner, case):
    """The `crossdev repro` command of a failing opinfo case (docs/repro.md), with this runner's bundle."""
    line = reproduce_line(case, getattr(runner, "source", None))
    if not line:
        return None
    return el("p", "reproduce: ", el("code", line)) if line.startswith("crossdev repro ") else el("p", "repro: ", line)


def render(report: Report):
    failures = report.gating_cases()
    if not failures:
        return el("p", "No gating failures (xfail and skip do not gate).", class_="ok-note")
    rows = [
        [runner.label, td(el("code", case["id"])), status_badge(case["status"]), execution_badge(case["execution"]),
         f"{case.get('file', '')}:{case.get('line', 0)}", td(case.get("message", ""), _reproduce(runner, case)),
         td(el("small", _details(case)))]
        for runner, case in failures
    ]
    return table(["runner", "case", "status", "execution", "where", "reason", "details"], rows, class_="grid")
