"""Cross-machine parity (docs/opinfo.md, "Cross-machine"): two runners' CPU outputs on the same serialised
samples (crossdev.report.cross_machine), pair by pair. A heat map of ops x pairs first (the OpInfo view's
picture), then one table per pair: case by case, samples compared, how many are bitwise equal, max abs /
rel / ULP (crossdev's floored ULP), the tolerance and its source, the verdict and the failing samples. A
refused pair (the runners did not run the same samples, or an outputs file is missing or altered) says
why instead of comparing anything."""
from collections import Counter

from crossdev.report.cross_machine import Pair
from crossdev.report.merge import Report
from crossdev.report.views.h import Markup, el, execution_badge, fmt_number, join, status_badge, table, td
from crossdev.report.views.opinfo_view import Column, Table, heat_map


def _heat_map(pairs) -> Markup:
    columns = [Column(runner=f"pair {i + 1}", kind=p.row) for i, p in enumerate(pairs)]
    by_op = {}
    for column, pair in zip(columns, pairs):
        for case in pair.cases:
            by_op.setdefault((case.op, column), Counter())[case.status] += 1
    ops = sorted({op for op, _ in by_op})
    return heat_map(Table(columns, ops, by_op, {}, {}))


def _pair_table(index: int, pair: Pair) -> Markup:
    title = el("h3", f"pair {index + 1}: ", el("b", pair.a.label), " vs ", el("b", pair.b.label), f" — row {pair.row} ",
               execution_badge(pair.execution))
    hosts = el("p", f"{pair.a.source} ({pair.a.target.get('host', '?')}: {pair.machines[0]}) against {pair.b.source} "
                    f"({pair.b.target.get('host', '?')}: {pair.machines[1]}); samples sha256 {pair.samples_sha256[:16]}..., the first "
                    "runner is the reference side (max rel is relative to its values).", class_="note")
    if pair.refused:
        return join([title, el("p", el("span", "refused", class_="badge st-bad"), " ", pair.refused)])
    rows = []
    for c in pair.cases:
        rows.append([el("code", c.op), c.dtype, c.check, td(str(c.samples), class_="num"),
                     td(f"{c.bitwise_equal}/{c.samples}", class_="num"), td(fmt_number(c.max_abs), class_="num"),
                     td(fmt_number(c.max_rel), class_="num"), td(fmt_number(c.max_ulp), class_="num"),
                     el("span", c.tolerance, title=c.tolerance_source), status_badge(c.status),
                     el("details", el("summary", f"{len(c.failing)} sample(s)"), el("pre", "\n".join(c.failing[:10])))
                     if c.failing else ("" if c.compared == "values" else c.compared)])
    header = ["op", "dtype", "check", "samples", "bitwise equal", "max abs", "max rel", "max ULP",
              "tolerance (hover: source)", "verdict", "failing samples"]
    extra = []
    for side, ids in ((pair.a.label, pair.only_in_a), (pair.b.label, pair.only_in_b)):
        if ids:
            extra.append(el("p", f"only in {side} (not compared): {', '.join(ids[:20])}", class_="note"))
    return join([title, hosts, table(header, rows, class_="grid cross-machine"), *extra])


def render(report: Report):
    pairs = report.cross_machine.pairs
    if not pairs:
        return None
    counts = Counter()
    for p in pairs:
        counts.update(p.counts())
    note = el("p", f"{len(pairs)} pair(s) of runners on the same serialised samples; {sum(counts.values())} case(s) "
                   f"compared: {counts['pass']} pass, {counts['fail']} fail, {counts['error']} raised on one runner "
                   "only. Each runner ran the samples on its own CPU (real); a case passes when every sample's outputs "
                   "agree within the tolerance its runners recorded (crossdev's table, op_db's CPU overrides, the "
                   "row's). Heat map: failing cases over cases, per op and pair.", class_="note")
    return join([note, _heat_map([p for p in pairs if not p.refused]) if any(not p.refused for p in pairs) else "",
                 *(_pair_table(i, p) for i, p in enumerate(pairs))])
