"""Device manager and error-recovery results (seed 003): each case against each runner.

These suites check behaviour, so the useful view is "did every runner agree": one row per case
id, one column per runner.
"""
from collections import OrderedDict

from crossdev.report.merge import Report
from crossdev.report.views.h import el, execution_badge, join, status_badge, table, td

# Suites of seed 003, by the names their Suite::name() returns.
MANAGER_SUITES = ("manager", "errors")


def render(report: Report):
    runners = [r.label for r in report.runners]
    by_case = OrderedDict()
    for runner, case in report.cases():
        if case["suite"] in MANAGER_SUITES:
            by_case.setdefault((case["suite"], case["id"]), {})[runner.label] = case
    if not by_case:
        return None
    rows = []
    for (suite, case_id), results in by_case.items():
        any_case = next(iter(results.values()))
        cells = []
        for label in runners:
            case = results.get(label)
            if case is None:
                cells.append(td("—", class_="cell-na"))
                continue
            cells.append(td(status_badge(case["status"]), " ", execution_badge(case["execution"]),
                            el("div", el("small", case.get("message", ""))) if case.get("message") else None,
                            class_="cell-sim" if case["execution"] == "simulated" else None))
        rows.append([suite, td(el("code", case_id), el("div", el("small", any_case.get("intent", "")))),
                     td(el("small", any_case.get("source", ""))), *cells])
    return join([table(["suite", "case", "source", *runners], rows, class_="grid", id="manager-table")])
