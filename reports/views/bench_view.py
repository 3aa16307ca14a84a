"""Benchmark charts: speedups of each impl over the fallback, and bandwidth against the measured peak."""
from reports.bench import BASELINE_IMPL, IMPL_ORDER, BenchTable, build_bench_table
from reports.views.h import el, fmt_number, join, table
from reports.views.svg import COLORS, Bar, hbar_chart


def _color(impl: str) -> str:
    return COLORS[IMPL_ORDER.index(impl) if impl in IMPL_ORDER else len(COLORS) - 1]


def _label(board: BenchTable, key) -> str:
    return f"{key.group()} @ {key.runner}" + (" [SIMULATED]" if board.runners_simulated.get(key.runner) else "")


def _speedups(board: BenchTable):
    bars = []
    for key in board.keys():
        for impl in board.impls(key):
            s = board.speedup(key, impl)
            if s is not None and impl != BASELINE_IMPL:
                bars.append(Bar(f"{_label(board, key)} {impl}", s, _color(impl),
                                f"{impl}: {s:.2f}x the {BASELINE_IMPL} speed"))
    if not bars:
        return el("p", f"No benchmark pairs an impl with its {BASELINE_IMPL}.", class_="note")
    top = max(max(b.value for b in bars), 1.0) * 1.1
    return hbar_chart(bars, top, lambda v: f"{v:.2f}x", ref=1.0, ref_label=f"{BASELINE_IMPL} = 1x",
                      aria=f"speedup over {BASELINE_IMPL}")


def _bandwidth(board: BenchTable):
    bars, rows = [], []
    for key in board.keys():
        for impl in board.impls(key):
            p = board.points[(key, impl)]
            if p.bw_util is None:
                continue
            gbps = (p.bytes_per_second or 0) / 1e9
            peak = gbps / p.bw_util if p.bw_util > 0 else None
            bars.append(Bar(f"{_label(board, key)} {impl}", 100 * p.bw_util, _color(impl),
                            f"{gbps:.1f} GB/s of a measured peak of {fmt_number(peak)} GB/s"))
            rows.append([p.name, impl, f"{gbps:.2f}", fmt_number(peak), f"{100 * p.bw_util:.1f}%",
                         f"{p.seconds * 1e6:.2f}"])
    if not bars:
        return el("p", "No benchmark reports bw_util.", class_="note")
    top = max(100.0, max(b.value for b in bars) * 1.05)
    chart = hbar_chart(bars, top, lambda v: f"{v:.0f}%", ref=100.0, ref_label="measured peak",
                       aria="bandwidth as a share of the measured peak")
    return join([chart, table(["benchmark", "impl", "GB/s", "peak GB/s", "of peak", "µs / iter"], rows,
                              class_="grid", id="bandwidth-table")])


def render(report):
    board = build_bench_table(report)
    if board is None:
        return None
    return join([el("h3", f"Speedup over {BASELINE_IMPL}"), _speedups(board),
                 el("h3", "Bandwidth against the measured peak"), _bandwidth(board)])
