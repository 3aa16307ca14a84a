"""Cross-device parity scoreboard: op x dtype x device, worst error per reference, then pairwise.

A reference's line shows the ULP figure and max_abs where the figure informs (parity.ulp_informs:
finite and at most 2^(mantissa bits)); otherwise max_abs and max_rel, with the figure in the tooltip."""
from crossdev.report.merge import Report
from crossdev.report.parity import MANTISSA_BITS, RefError, Scoreboard, build_scoreboard, ulp_informs
from crossdev.report.views.h import Markup, el, fmt_number, join, status_badge, table, td

_CELL_CLASS = {"pass": "cell-ok", "xfail": "cell-na", "skip": "cell-na"}
# References in the order a reader wants them; anything else the bundle has follows.
_REFERENCE_ORDER = ("golden", "vs_cpu", "fused_vs_fallback", "reproducible", "all references")


def _column_header(board: Scoreboard, column: str) -> Markup:
    if board.column_simulated[column]:
        return join([column, " ", el("span", "SIMULATED", class_="badge sim")])
    return Markup(el("span", column))


def _reference_line(name: str, err: RefError, dtype: str) -> Markup:
    if ulp_informs(err.max_ulp, dtype):
        return el("div", el("small", f"{name}: ulp {fmt_number(err.max_ulp)}, abs {fmt_number(err.max_abs)}"))
    why = None
    if err.max_ulp is not None:
        bound = f"2^{MANTISSA_BITS[dtype]}" if dtype in MANTISSA_BITS else "range"
        why = f"ulp {fmt_number(err.max_ulp)} not shown: beyond {bound} ulps it says less than abs and rel"
    return el("div", el("small", f"{name}: abs {fmt_number(err.max_abs)}, rel {fmt_number(err.max_rel)}", title=why))


def _cell(board: Scoreboard, op: str, dtype: str, column: str):
    cell = board.cells.get((op, dtype, column))
    if cell is None:
        return td("—", class_="cell-na", title="not in this runner's matrix")
    if not cell.ran:
        return td(el("span", "not run", class_="badge st-sk"), class_="cell-na")
    lines = [status_badge(cell.status)]
    if cell.simulated:
        lines += [" ", el("span", "SIMULATED", class_="badge sim")]
    refs = sorted(cell.refs.items(), key=lambda kv: (_REFERENCE_ORDER.index(kv[0])
                                                     if kv[0] in _REFERENCE_ORDER else 99, kv[0]))
    lines += [_reference_line(name, err, dtype) for name, err in refs]
    cls = "cell-sim" if cell.simulated else _CELL_CLASS.get(cell.status, "cell-bad")
    return td(*lines, class_=cls, data_status=cell.status, title=f"{cell.cases} case(s): shape sets x impls")


def _pairwise(board: Scoreboard) -> Markup:
    rows = []
    for op, dtype in board.rows:
        for pair in board.pairs(op, dtype):
            if pair.identical is None:
                verdict = "no digests"
            else:
                verdict = el("span", "identical" if pair.identical else "differs",
                             class_="badge " + ("st-ok" if pair.identical else "st-bad"))
            simulated = board.column_simulated[pair.a] or board.column_simulated[pair.b]
            rows.append([op, dtype, pair.a, pair.b, verdict,
                         td("≤ " + fmt_number(pair.abs_bound) if pair.abs_bound is not None else "—", class_="num"),
                         el("span", "SIMULATED", class_="badge sim") if simulated else "real"])
    if not rows:
        return el("p", "Pairwise comparison needs one op and dtype on at least two devices.", class_="note")
    note = el("p", "Across machines, outputs are compared by digest of identical portable inputs when the bundles "
                   "carry one; the abs bound is err(a, golden) + err(b, golden) (triangle inequality). "
                   "Same-machine device-vs-CPU errors are the vs_cpu lines in the scoreboard.", class_="note")
    return join([note, table(["op", "dtype", "device a", "device b", "outputs", "max abs (bound)", "execution"],
                             rows, class_="grid", id="pairwise")])


def render(report: Report):
    board = build_scoreboard(report)
    if board is None:
        return None
    header = ["op", "dtype", *(_column_header(board, c) for c in board.columns)]
    rows = [[el("b", op), dtype, *(_cell(board, op, dtype, c) for c in board.columns)] for op, dtype in board.rows]
    legend = el("p", "Worst value over shape sets, impls and output/gradient tensors. ulp: |a - e| in ulps of "
                     "max(|e|, atol / rtol) (docs/parity.md), shown up to 2^(mantissa bits), which no passing case "
                     "reaches; beyond it, or non-finite, abs and rel instead. Cells against simulated "
                     "devices are purple and never count as a real-device pass.", class_="note")
    return join([legend, table(header, rows, class_="grid", id="scoreboard-table"), el("h3", "Pairwise"),
                 _pairwise(board)])
