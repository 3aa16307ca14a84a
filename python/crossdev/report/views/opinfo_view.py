"""OpInfo parity (suite: opinfo, docs/opinfo.md): ATen operators on each device against the CPU.

A heat map of ops x devices first (a reader looks for the red), then one sortable scoreboard per
device (op x dtype: pass, xfail, fail and skip counts over checks and variants), and behind each
failing row its cases with the samples' shapes and errors; the expectation entries a run found stale are
listed after the heat map. A device column of a simulated run says
SIMULATED wherever it appears. On `sim` a scoreboard row says which kernel ran there
(crossdev.opinfo.kernel_source): a composite kernel (the code a new backend inherits, compared with
the CPU's own) or the CPU's kernel through sim's backend fallback (plumbing only)."""
from collections import Counter
from typing import Dict, List, NamedTuple, Tuple

from crossdev import xla_lowering
from crossdev.report.merge import Report
from crossdev.report.schema import GATING_STATUSES
from crossdev.report.views.h import Markup, el, fmt_number, join, table, td

SUITE = "opinfo"
BAD = GATING_STATUSES  # what turns a cell red; xfail is known, skip did not run
CELL_W, CELL_H, LABEL_W, HEAD_H = 96, 18, 180, 40


class Column(NamedTuple):
    """A device kind of one runner; simulated when any of its cases ran on a simulated device."""
    runner: str
    kind: str
    simulated: bool = False

    @property
    def title(self) -> str:
        return f"{self.kind} ({self.runner})" + (" SIMULATED" if self.simulated else "")


class Table(NamedTuple):
    """What the view draws: columns in first-seen order, ops sorted, counts per cell and per (op, dtype)."""
    columns: List[Column]
    ops: List[str]
    by_op: Dict[Tuple[str, Column], Counter]
    by_op_dtype: Dict[Column, Dict[Tuple[str, str], Counter]]
    failing: Dict[Tuple[str, str, Column], List[dict]]
    # (op, dtype, column) -> {check: (kernel_source, device_kernels)} of simulated cases (kernel_source.py)
    kernel_sources: Dict[Tuple[str, str, Column], Dict[str, Tuple[str, str]]] = {}


def collect(report: Report) -> Table:
    keys, simulated, ops = [], set(), set()
    by_op, by_op_dtype, failing, kernels = {}, {}, {}, {}
    for runner, case in report.cases():
        if case.get("suite") != SUITE:
            continue
        details = case.get("details") or {}
        op, dtype = str(details.get("op", "?")), str(details.get("dtype", "?"))
        key = (runner.label, str(details.get("device_kind") or case.get("device", "?").split(":")[0]))
        if key not in keys:
            keys.append(key)
        if case.get("execution") == "simulated":
            simulated.add(key)
        ops.add(op)
        status = case.get("status", "?")
        by_op.setdefault((op, key), Counter())[status] += 1
        by_op_dtype.setdefault(key, {}).setdefault((op, dtype), Counter())[status] += 1
        if status in BAD:
            failing.setdefault((op, dtype, key), []).append(case)
        if details.get("kernel_source"):
            check = str(details.get("check", "?")) + ("" if details.get("variant", "function") == "function"
                                                      else f"/{details['variant']}")
            kernels.setdefault((op, dtype, key), {})[check] = (str(details["kernel_source"]),
                                                               str(details.get("device_kernels", "")))
    columns = {key: Column(*key, key in simulated) for key in keys}
    return Table(list(columns.values()), sorted(ops),
                 {(op, columns[key]): c for (op, key), c in by_op.items()},
                 {columns[key]: rows for key, rows in by_op_dtype.items()},
                 {(op, dtype, columns[key]): cases for (op, dtype, key), cases in failing.items()},
                 {(op, dtype, columns[key]): k for (op, dtype, key), k in kernels.items()})


def _bad(counts: Counter) -> int:
    return sum(counts[s] for s in BAD)


def _fill(counts: Counter) -> str:
    ran = sum(counts.values()) - counts["skip"]
    if not counts or ran == 0:
        return "#eaeef2"  # nothing ran: grey
    bad = _bad(counts)
    if bad == 0:
        return "#d0d7de" if counts["pass"] == 0 else "#2da44e"  # only xfail: blue-grey; else green
    # One failing case already reads red; more failing cases, deeper red.
    share = bad / ran
    lightness = 78 - 38 * share
    return f"hsl(356, 72%, {lightness:.0f}%)"


def heat_map(t: Table) -> Markup:
    width = LABEL_W + CELL_W * len(t.columns) + 8
    height = HEAD_H + CELL_H * len(t.ops) + 8
    parts = []
    for j, column in enumerate(t.columns):
        x = LABEL_W + CELL_W * j + CELL_W / 2
        parts.append(el("text", el("title", column.title), column.kind + (" (sim)" if column.simulated else ""),
                        x=f"{x:.0f}", y=HEAD_H - 20, text_anchor="middle"))
        parts.append(el("text", column.runner[:14], x=f"{x:.0f}", y=HEAD_H - 6, text_anchor="middle",
                        font_size="10"))
    for i, op in enumerate(t.ops):
        y = HEAD_H + CELL_H * i
        parts.append(el("text", op, x=LABEL_W - 6, y=y + CELL_H - 5, text_anchor="end"))
        for j, column in enumerate(t.columns):
            counts = t.by_op.get((op, column), Counter())
            ran = sum(counts.values()) - counts["skip"]
            summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "not in this run"
            parts.append(el("rect", el("title", f"{op} on {column.title}: {summary}"), x=LABEL_W + CELL_W * j,
                            y=y, width=CELL_W - 2, height=CELL_H - 2, fill=_fill(counts)))
            if ran:
                parts.append(el("text", f"{_bad(counts)}/{ran}", x=f"{LABEL_W + CELL_W * j + CELL_W / 2 - 1:.0f}",
                                y=y + CELL_H - 5, text_anchor="middle", font_size="10"))
    return el("svg", *parts, width=width, height=height, viewBox=f"0 0 {width} {height}", role="img",
              aria_label="OpInfo heat map: ops by device, failing cases over cases run", class_="heatmap")


def _failing_details(cases: List[dict]) -> Markup:
    items = []
    for case in cases:
        details = case.get("details") or {}
        samples, float64 = details.get("failing_samples", ""), details.get("float64", "")
        items.append(el("li", el("code", case.get("id", "?")), ": ", case.get("status", "?"), " — ",
                        case.get("message", ""), el("p", "float64 diagnostic: ", float64) if float64 else None,
                        el("pre", samples) if samples else None))
    return el("details", el("summary", f"{len(cases)} failing case(s)"), el("ul", *items))


def _kernel_cell(by_check: Dict[str, Tuple[str, str]]) -> Markup:
    """`composite (forward), cpu_fallback (backward)`, each with the ATen ops and what ran for them."""
    return join([el("span", f"{source} ({check})", title=ops, class_=f"kernel-{source}")
                 for check, (source, ops) in sorted(by_check.items())], sep=", ")


def scoreboard(t: Table, column: Column) -> Markup:
    # A column whose cases say what ran for them: sim's kernel sources, torch_xla's lowering (xla_lowering.py)
    labelled = column.simulated or any(key[2] == column for key in t.kernel_sources)
    rows = []
    for (op, dtype), counts in sorted(t.by_op_dtype.get(column, {}).items()):
        failing = t.failing.get((op, dtype, column), [])
        bad = _bad(counts)
        rows.append([el("b", op), dtype, td(str(counts["pass"]), class_="num"), td(str(counts["xfail"]), class_="num"),
                     td(str(bad), class_="num cell-bad" if bad else "num"), td(str(counts["skip"]), class_="num"),
                     *([_kernel_cell(t.kernel_sources.get((op, dtype, column), {}))] if labelled else []),
                     _failing_details(failing) if failing else ""])
    header = ["op", "dtype", "pass", "xfail", "fail", "skip",
              *(["device kernel (hover: ATen ops)"] if labelled else []), "failing samples (shapes, errors)"]
    title = el("h3", column.kind, " (", column.runner, ") ",
               el("span", "SIMULATED", class_="badge sim") if column.simulated else el("span", "real", class_="badge real"))
    return join([title, table(header, rows, class_="grid opinfo-scoreboard")])


def stale_expectations(report: Report):
    """The expectation entries a run found stale (the bundle's `stale_expectations`), or None."""
    rows = [[runner.label, el("code", s["where"]), el("code", s["match"]), s["status"], s["reason"]]
            for runner in report.runners for s in runner.doc.get("stale_expectations") or []]
    if not rows:
        return None
    return join([el("h3", "Stale expectations"),
                 el("p", "These entries match no case of a run that ran every row they could match (no --filter, "
                         "every row finished; a sharded run: no shard matched them): remove them, or let `crossdev expectations accept` drop "
                         "them.", class_="note"),
                 table(["runner", "entry", "match", "status", "reason"], rows, class_="grid")])


# What decided a case beside the plain comparison (docs/opinfo.md, "Verdicts that hold on a real accelerator"):
# (column title, does a case count)
RULES = (
    ("declared gaps (skip)", lambda c, d, m: c.get("status") == "skip" and bool(d.get("declared_gap"))),
    ("passed by the float64 rule", lambda c, d, m: c.get("status") == "pass" and bool(m.get("float64_rule_passes"))),
    ("random, by distribution", lambda c, d, m: bool(d.get("random_ops"))),
    ("op_db xfail", lambda c, d, m: c.get("status") == "xfail" and "op_db expects" in str(c.get("message", ""))),
    ("TF32 rerun", lambda c, d, m: bool(d.get("tf32"))),
)


def rule_counts(report: Report):
    """Per runner and device kind, how many cases each rule decided."""
    counts: Dict[Tuple[str, str], Counter] = {}
    for runner, case in report.cases():
        if case.get("suite") != SUITE:
            continue
        details, metrics = case.get("details") or {}, case.get("metrics") or {}
        key = (runner.label, str(details.get("device_kind") or case.get("device", "?").split(":")[0]))
        row = counts.setdefault(key, Counter())
        for title, applies in RULES:
            row[title] += bool(applies(case, details, metrics))
    if not any(sum(c.values()) for c in counts.values()):
        return Markup("")
    rows = [[td(runner), td(kind), *(td(str(c[title]), class_="num") for title, _ in RULES)]
            for (runner, kind), c in counts.items()]
    return join([el("h3", "What the device rules decided"),
                 table(["runner", "kind", *(title for title, _ in RULES)], rows, class_="grid")])




def xla_lowering_table(report: Report):
    """Per runner and kind with real xla cases: how many were lowered, reached the CPU fallback, and passed
    without leaving the CPU (plumbing only), with the graphs compiled and the time it took."""
    rows: Dict[Tuple[str, str], Counter] = {}
    seconds: Dict[Tuple[str, str], float] = {}
    for runner, case in report.cases():
        details, metrics = case.get("details") or {}, case.get("metrics") or {}
        label = str(details.get("kernel_source", ""))
        if case.get("suite") != SUITE or label not in xla_lowering.MEANING:
            continue
        key = (runner.label, str(details.get("device_kind") or case.get("device", "?").split(":")[0]))
        row = rows.setdefault(key, Counter())
        row[label] += 1
        row["plumbing only"] += case.get("status") == "pass" and label == xla_lowering.FALLBACK
        row["graphs"] += int(metrics.get("xla_compiles", 0) or 0)
        seconds[key] = seconds.get(key, 0.0) + float(metrics.get("xla_compile_s", 0.0) or 0.0)
    if not rows:
        return Markup("")
    body = [[td(runner), td(kind), *(td(str(c[label]), class_="num") for label, _ in xla_lowering.TITLES),
             td(str(c["plumbing only"]), class_="num"), td(str(c["graphs"]), class_="num"),
             td(fmt_number(seconds[(runner, kind)], 3), class_="num")] for (runner, kind), c in rows.items()]
    return join([el("h3", "What ran on XLA (torch_xla's counters)"),
                 el("p", "A case on a real xla device is lowered to XLA and compiled, or reaches torch_xla's ATen CPU "
                         "fallback; a pass that never left the CPU proves only the plumbing. A compile per new shape "
                         "is expected (docs/xla.md).", class_="note"),
                 table(["runner", "kind", *(title for _, title in xla_lowering.TITLES), "passes that never left the CPU",
                        "graphs compiled", "compile s"], body, class_="grid")])


def render(report: Report):
    t = collect(report)
    if not t.columns:
        return None
    total = sum(sum(c.values()) for c in t.by_op.values())
    bad = sum(_bad(c) for c in t.by_op.values())
    note = el("p", f"{len(t.ops)} ops, {total} cases, {bad} failing ({fmt_number(100.0 * bad / total, 3)}%). "
                   "Each cell: failing cases over cases run (checks x variants x dtypes); green all pass, red "
                   "any failing (deeper: a larger share), blue-grey only expected failures, grey nothing ran. "
                   "On a simulated device an op runs a composite kernel where ATen has one (CompositeExplicitAutograd: "
                   "the code a new backend inherits, compared here with the CPU's own kernel), else the CPU's kernel "
                   "through sim's backend fallback, which proves only the plumbing; the scoreboards' device kernel "
                   "column says which, per check.", class_="note")
    return join([note, heat_map(t), rule_counts(report), xla_lowering_table(report), stale_expectations(report),
                 *(scoreboard(t, c) for c in t.columns)])
