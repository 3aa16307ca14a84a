"""Failure details: every case that gates (fail, xpass, error, crash), with where and why."""
from crossdev.report.merge import Report
from crossdev.report.views.h import el, execution_badge, status_badge, table, td


def _details(case) -> str:
    return "; ".join(f"{k}: {v}" for k, v in case.get("details", {}).items())


def render(report: Report):
    failures = report.gating_cases()
    if not failures:
        return el("p", "No gating failures (xfail and skip do not gate).", class_="ok-note")
    rows = [
        [runner.label, td(el("code", case["id"])), status_badge(case["status"]), execution_badge(case["execution"]),
         f"{case.get('file', '')}:{case.get('line', 0)}", case.get("message", ""), td(el("small", _details(case)))]
        for runner, case in failures
    ]
    return table(["runner", "case", "status", "execution", "where", "reason", "details"], rows, class_="grid")
