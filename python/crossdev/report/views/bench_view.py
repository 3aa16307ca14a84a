"""Benchmark charts: one scaling chart per op and pass (achieved GB/s, or time for an op that reports no
bytes, against size on a log axis, sizes in numeric order), one line per impl, the same run's STREAM
triad as the reference line, each point's spread drawn as a whisker and noisy points (CV above 5%)
hollow; beside it the ratio of the fused kernel to the best other impl at each size. With a baseline
(`crossdev report --baseline`), bench-gate's flagged benchmarks are drawn on their op's chart. A table
lists every figure with its spread."""
import math
from typing import Dict, List, Optional, Tuple

from crossdev.report.bench import (FUSED_IMPLS, IMPL_ORDER, NOISY_CV, TRIAD_OP, BenchKey, BenchTable, ScalingKey,
                                   build_bench_table, size_value)
from crossdev.report.bench_baseline import FLAGGED, comparisons_by_point
from crossdev.report.views.h import el, fmt_number, join, table
from crossdev.report.views.svg import COLORS, ScaleLine, ScaleMarker, ScalePoint, scaling_chart

TRIAD_COLOR, RATIO_COLOR = "#24292f", "#0969da"
PASS_ORDER = ("fwd", "fwd_bwd")  # then any other pass, in name order


def _color(impl: str) -> str:
    return COLORS[IMPL_ORDER.index(impl) % len(COLORS) if impl in IMPL_ORDER else len(COLORS) - 1]


def anchor(key: ScalingKey) -> str:
    return "scale-" + "-".join(part.replace(" ", "_") for part in (key.runner, key.op, key.dtype, key.device, key.pass_))


def _where(board: BenchTable, keys: List[BenchKey]) -> str:
    """Where the figures ran: the entries' own device label (benchmarks never run on a simulated device)."""
    labels = sorted({board.points[(k, impl)].device_label for k in keys for impl in board.impls(k)} - {""})
    return ", ".join(labels) or keys[0].device


def _spread_note(p) -> str:
    if p.cv is None:
        return "(1 repetition: no spread)"
    return f"CV {p.cv:.1%}" + (" NOISY" if p.noisy else "")


def _caption(board: BenchTable) -> List:
    lines = []
    for runner, ctx in sorted(board.contexts.items()):
        # The peers driver's keys first (merged as crossdev_peers_*): its figures are the triad's.
        get = lambda key: next((str(ctx[n]) for n in (f"crossdev_peers_{key}", f"crossdev_{key}")  # noqa: E731
                                if n in ctx), "not recorded")
        cpp = ctx.get("crossdev_allocator")
        other = (f" (crossdev_bench: {cpp})" if "crossdev_peers_allocator" in ctx and cpp
                 and cpp != ctx["crossdev_peers_allocator"] else "")
        lines.append(el("p", f"{runner}: allocator {get('allocator')}{other}; CPU capability {get('cpu_capability')}; "
                             f"ATen threads {get('aten_threads')}; CPU affinity {get('affinity')}; "
                             f"load average {ctx.get('load_avg', 'not recorded')}.", class_="note"))
    return lines


def _gbps_fmt(v: float) -> str:
    return f"{v:.2f} GB/s" if v < 10 else f"{v:.0f} GB/s"


def _us_fmt(v: float) -> str:
    return f"{v:.3g} µs"


def _positions(sizes: List[str]) -> List[float]:
    """x of each size: log2 of its element count, so the axis is logarithmic; evenly spaced when a label is
    not a size."""
    values = [size_value(s) for s in sizes]
    if all(v is not None and v > 0 for v in values):
        return [math.log2(v) for v in values]
    return [float(i) for i in range(len(sizes))]


def _chart(board: BenchTable, group: ScalingKey, keys: List[BenchKey], flagged: Dict[Tuple[BenchKey, str], object]):
    sizes = [k.size for k in keys]
    impls = sorted({i for k in keys for i in board.impls(k)}, key=lambda i: board.impls_order(i))
    bandwidth = all(board.points[(k, i)].gbps() is not None for k in keys for i in board.impls(k))
    lines, markers = [], []
    for impl in impls:
        points = []
        for x, key in enumerate(keys):
            p = board.points.get((key, impl))
            if p is None:
                continue
            value = p.gbps() if bandwidth else p.seconds * 1e6
            if bandwidth:
                lo = p.gbps(p.max_seconds) if p.max_seconds else None  # the slowest repetition: the fewest GB/s
                hi = p.gbps(p.min_seconds) if p.min_seconds else None
            else:
                lo = p.min_seconds * 1e6 if p.min_seconds else None
                hi = p.max_seconds * 1e6 if p.max_seconds else None
            fmt = _gbps_fmt if bandwidth else _us_fmt
            triad = board.triad_gbps(key) if bandwidth else None
            share = f", {value / triad:.0%} of the triad" if triad else ""
            points.append(ScalePoint(x, value, f"{p.name}: median {fmt(value)} (spread {fmt_number(lo)}..{fmt_number(hi)})"
                                               f"{share}; {_spread_note(p)}; ran on {p.device_label}",
                                     lo, hi, p.noisy))
            comp = flagged.get((key, impl))
            if comp is not None and comp["baseline_median_ns"]:
                base_s = comp["baseline_median_ns"] * 1e-9
                base = p.gbps(base_s) if bandwidth else base_s * 1e6
                markers.append(ScaleMarker(x, base, value, "#cf222e" if comp["verdict"] == "regression" else "#1a7f37",
                                           f"{p.name}: bench-gate {comp['verdict']}: baseline {fmt(base)}, now "
                                           f"{fmt(value)} ({comp['reason']})",
                                           f"{impl} {comp['change']:+.0%}"))
        if points:
            lines.append(ScaleLine(impl, _color(impl), points))
    if bandwidth:
        triad = [ScalePoint(x, board.triad_gbps(k), f"STREAM triad at {k.size}, same run: {board.triad_gbps(k):.2f} GB/s")
                 for x, k in enumerate(keys) if board.triad_gbps(k)]
        if triad:
            lines.append(ScaleLine("triad", TRIAD_COLOR, triad, dashed=True))
    positions = _positions(sizes)
    what = "achieved GB/s" if bandwidth else "median time per call"
    main = scaling_chart(sizes, positions, lines, _gbps_fmt if bandwidth else _us_fmt, log_y=True,
                         markers=markers, aria=f"{group.op} {group.pass_}: {what} against size")
    ratios = []
    for x, key in enumerate(keys):
        r = board.fused_ratio(key)
        if r is not None:
            ratio, fused, best = r
            noisy = board.points[(key, fused)].noisy or board.points[(key, best)].noisy
            ratios.append(ScalePoint(x, ratio, f"{key.size}: {fused} is {ratio:.2f}x the speed of the best other impl "
                                               f"({best}){' — NOISY' if noisy else ''}", noisy=noisy))
    side = None
    if ratios:
        side = scaling_chart(sizes, positions, [ScaleLine("fused / best peer", RATIO_COLOR, ratios)],
                             lambda v: f"{v:.3g}x", log_y=True, ref=1.0, ref_label="as fast as the best peer", width=300,
                             legend=False, aria=f"{group.op} {group.pass_}: fused against the best other impl")
    title = f"{group.op} · {group.dtype} · {group.pass_} — {_where(board, keys)}" + (
        f" @ {group.runner}" if len({k.runner for k in board.keys()}) > 1 else "")
    return el("figure", el("figcaption", el("strong", title), f" — {what}"), el("div", main, side, class_="scaling-pair"),
              class_="scaling", id=anchor(group), data_op=group.op,
              data_pass=group.pass_, data_sizes=" ".join(sizes))


def _scaling(board: BenchTable, report):
    by_point = comparisons_by_point(report, board)
    flagged = {where: comp for where, comp in by_point.items() if comp["verdict"] in FLAGGED}
    groups = board.scaling_groups()
    ordered = sorted((g for g in groups if g.op != TRIAD_OP),
                     key=lambda g: (g.runner, g.op, g.dtype, g.device,
                                    PASS_ORDER.index(g.pass_) if g.pass_ in PASS_ORDER else len(PASS_ORDER), g.pass_))
    figures = [_chart(board, g, groups[g], flagged) for g in ordered]
    if not figures:
        return el("p", "No benchmark to chart.", class_="note")
    note = el("p", "Left: achieved GB/s (compulsory bytes / median time), or the median time per call for an op that "
                   "reports no bytes, against the size (elements; both axes logarithmic), one line per impl; dashed: "
                   "the STREAM triad measured in the same process at the same size. Whiskers span the fastest and "
                   f"slowest repetition; hollow points are noisy (CV > {NOISY_CV:.0%}). Right: the fastest other "
                   f"impl's time / the {' (else '.join(FUSED_IMPLS)}) time at each size (above 1: the fused kernel is "
                   "faster). With --baseline, a square marks the baseline's figure of each benchmark bench-gate "
                   "flags, joined to this run's.", class_="note")
    return join([note, *figures, *_caption(board)])


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
    return join([el("h3", "Scaling: each op against size, every impl, the same-run triad"), _scaling(board, report),
                 el("details", el("summary", "Every figure with its spread"), _table(board))])
