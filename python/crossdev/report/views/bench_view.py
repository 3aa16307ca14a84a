"""Benchmark charts: a roofline of achieved GB/s against the same-run triad, speedups over the
fallback, and a table with every figure's spread. Bars are grouped by op case, each labelled with
the device it actually ran on; a figure whose repetitions vary by more than 5% (CV) is marked noisy."""
from typing import List, Optional

from crossdev.report.bench import BASELINE_IMPL, IMPL_ORDER, NOISY_CV, TRIAD_OP, BenchKey, BenchTable, build_bench_table
from crossdev.report.views.h import el, fmt_number, join, table
from crossdev.report.views.svg import COLORS, BarGroup, RangeBar, grouped_hbar_chart


def _color(impl: str) -> str:
    return COLORS[IMPL_ORDER.index(impl) % len(COLORS) if impl in IMPL_ORDER else len(COLORS) - 1]


def _where(board: BenchTable, key: BenchKey) -> str:
    """Where the figures ran: the entries' own device label (benchmarks never run on a simulated device)."""
    labels = sorted({board.points[(key, impl)].device_label for impl in board.impls(key)} - {""})
    return ", ".join(labels) or key.device


def _title(board: BenchTable, key: BenchKey) -> str:
    runners = {k.runner for k in board.keys()}
    return (f"{key.op} · {key.dtype} · {key.size} · {key.pass_} — {_where(board, key)}"
            + (f" @ {key.runner}" if len(runners) > 1 else ""))


def _spread_note(p) -> str:
    if p.cv is None:
        return "(1 repetition: no spread)"
    return f"CV {p.cv:.1%}" + (" NOISY" if p.noisy else "")


def _caption(board: BenchTable) -> List:
    lines = []
    for runner, ctx in sorted(board.contexts.items()):
        # The peers driver's keys first (merged as crossdev_peers_*): its figures are the roofline's.
        get = lambda key: next((str(ctx[n]) for n in (f"crossdev_peers_{key}", f"crossdev_{key}")  # noqa: E731
                                if n in ctx), "not recorded")
        cpp = ctx.get("crossdev_allocator")
        other = (f" (crossdev_bench: {cpp})" if "crossdev_peers_allocator" in ctx and cpp
                 and cpp != ctx["crossdev_peers_allocator"] else "")
        lines.append(el("p", f"{runner}: allocator {get('allocator')}{other}; CPU capability {get('cpu_capability')}; "
                             f"ATen threads {get('aten_threads')}; CPU affinity {get('affinity')}; "
                             f"load average {ctx.get('load_avg', 'not recorded')}.", class_="note"))
    return lines


def _roofline(board: BenchTable):
    groups: List[BarGroup] = []
    top, top_triad = 0.0, 0.0
    for key in board.keys():
        if key.op == TRIAD_OP:
            continue
        triad = board.triad_gbps(key)
        bars = []
        for impl in board.impls(key):
            p = board.points[(key, impl)]
            gbps = p.gbps()
            if gbps is None:
                continue
            lo = p.gbps(p.max_seconds) if p.max_seconds else None  # the slowest repetition: the fewest GB/s
            hi = p.gbps(p.min_seconds) if p.min_seconds else None
            share = f", {gbps / triad:.0%} of the triad" if triad else ""
            bars.append(RangeBar(impl, gbps, _color(impl),
                                 f"{p.name}: median {gbps:.2f} GB/s (min {fmt_number(lo)}, max {fmt_number(hi)})"
                                 f"{share}; {_spread_note(p)}; ran on {p.device_label}", lo, hi,
                                 " · ".join(n for n in ((f"{gbps / triad:.0%} of triad" if triad else ""),
                                                         ("NOISY" if p.noisy else "")) if n)))
            top = max(top, gbps)
        if triad:
            top_triad = max(top_triad, triad)
        if bars:
            groups.append(BarGroup(_title(board, key), bars, triad,
                                   f"STREAM triad at {key.size}, same run: {triad:.2f} GB/s" if triad else ""))
    if not groups:
        return el("p", "No benchmark reports bytes_per_second.", class_="note")
    # The scale ends at 1.5x the largest triad when there is one (a figure above it ran from cache: its
    # bar is clipped, its number is not), so one outlier cannot squash every other bar.
    scale = min(top, 1.5 * top_triad) if top_triad else top
    chart = grouped_hbar_chart(groups, max(scale, top_triad) * 1.1, lambda v: f"{v:.2f} GB/s" if v < 10 else f"{v:.1f} GB/s",
                               aria="achieved GB/s of every op and impl against the measured triad")
    caption = el("figcaption", "Achieved GB/s (compulsory bytes / median time; the whisker spans the fastest and "
                 "slowest repetition) against the STREAM triad measured in the same process at the same size "
                 "(dashed red line); the axis ends at 1.5x the largest triad, longer bars are clipped. ", *_caption(board))
    return el("figure", chart, caption, class_="roofline", id="roofline")


def _speedups(board: BenchTable):
    groups: List[BarGroup] = []
    top = 1.0
    for key in board.keys():
        base = board.points.get((key, BASELINE_IMPL))
        bars = []
        for impl in board.impls(key):
            s = board.speedup(key, impl)
            if s is None or impl == BASELINE_IMPL:
                continue
            p = board.points[(key, impl)]
            noisy = p.noisy or (base is not None and base.noisy)
            bars.append(RangeBar(impl, s, _color(impl), f"{impl}: {s:.2f}x the {BASELINE_IMPL} speed (medians); "
                                 f"{impl} {_spread_note(p)}, {BASELINE_IMPL} {_spread_note(base)}",
                                 note="NOISY" if noisy else ""))
            top = max(top, s)
        if bars:
            groups.append(BarGroup(_title(board, key), bars, 1.0, f"{BASELINE_IMPL} = 1x"))
    if not groups:
        return el("p", f"No benchmark pairs an impl with its {BASELINE_IMPL}.", class_="note")
    return grouped_hbar_chart(groups, top * 1.1, lambda v: f"{v:.2f}x", aria=f"speedup over {BASELINE_IMPL}")


def _ms(seconds: Optional[float]) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:.2f}"


def _table(board: BenchTable):
    rows = []
    for key in board.keys():
        triad = board.triad_gbps(key)
        for impl in board.impls(key):
            p = board.points[(key, impl)]
            gbps = p.gbps()
            rows.append([p.name, p.device_label, impl, _ms(p.seconds), _ms(p.min_seconds), _ms(p.max_seconds),
                         "—" if p.cv is None else f"{p.cv:.1%}", "NOISY" if p.noisy else "",
                         "—" if gbps is None else f"{gbps:.2f}",
                         "—" if gbps is None or not triad else f"{gbps / triad:.0%}",
                         "—" if p.bw_util is None else f"{100 * p.bw_util:.0f}%",
                         fmt_number(p.minflt_per_call)])
    return table(["benchmark", "ran on", "impl", "median µs", "min µs", "max µs", "CV", f"CV > {NOISY_CV:.0%}",
                  "GB/s", "of triad", "bw_util", "minor faults / call"], rows, class_="grid", id="bandwidth-table")


def render(report):
    board = build_bench_table(report)
    if board is None:
        return None
    return join([el("h3", "Roofline: achieved bandwidth against the same-run triad"), _roofline(board),
                 el("h3", f"Speedup over {BASELINE_IMPL}"), _speedups(board),
                 el("h3", "Every figure with its spread"), _table(board)])
