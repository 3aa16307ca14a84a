"""Seed 002's redirect-policy table, rendered as in the seed with pass/fail per cell."""
from crossdev.report.merge import Report
from crossdev.report.redirect import RedirectTable, build_redirect_table
from crossdev.report.views.h import el, join, table, td


def _entry(override: str, outcome) -> object:
    mark = el("span", "pass" if outcome.passed else "FAIL", class_="badge " + ("st-ok" if outcome.passed else "st-bad"))
    text = f"{outcome.request} → {outcome.result}"
    title = f"override {override}; {outcome.action}; " + "; ".join(
        f"{runner}: {status}" for runner, status in outcome.statuses.items())
    if outcome.messages:
        title += "; " + "; ".join(outcome.messages)
    return el("div", el("small", f"override {override}: "), el("code", text), " ", mark, title=title)


def _cell(board: RedirectTable, forms, host: str):
    entries = board.cell(forms, host)
    if not entries:
        return td("—", class_="cell-na")
    ok = all(o.passed for _, o in entries)
    return td(*(_entry(override, o) for override, o in entries), class_="cell-ok" if ok else "cell-bad",
              data_status="pass" if ok else "fail")


def render(report: Report):
    board = build_redirect_table(report)
    if board is None:
        return None
    header = ["Device Specification", *(title for _, title in board.columns)]
    rows = [[el("b", label), *(_cell(board, forms, host) for host, _ in board.columns)] for label, forms in board.rows]
    note = el("p", "Policy torchdevice (MPS > CUDA > CPU). Each entry: request → resulting device, with the CPU "
                   "override off and on, pass/fail as every runner reported it (hover for details). Host profiles are "
                   "hypothetical: these cases exercise the policy, not devices, and count as ",
              el("span", "SIMULATED", class_="badge sim"), ".", class_="note")
    return join([note, table(header, rows, class_="grid", id="redirect-table")])
