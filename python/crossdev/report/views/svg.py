"""Inline SVG charts (no library, no external request): horizontal bars and a line chart."""
import math
from typing import Callable, List, NamedTuple, Optional, Sequence

from crossdev.report.views.h import Markup, el

BAR_H, GAP, LABEL_W, PLOT_W, VALUE_W = 16, 4, 460, 360, 90
COLORS = ("#0969da", "#bf8700", "#1a7f37", "#8250df", "#cf222e", "#57606a", "#1b7c83")


class Bar(NamedTuple):
    label: str
    value: float
    color: str
    title: str


def hbar_chart(bars: List[Bar], max_value: float, fmt: Callable[[float], str], ref: Optional[float] = None,
               ref_label: str = "", aria: str = "") -> Markup:
    """One bar per row; `ref` draws a dashed vertical line (e.g. speedup 1.0, or 100% of peak)."""
    height = len(bars) * (BAR_H + GAP) + 24
    width = LABEL_W + PLOT_W + VALUE_W
    scale = PLOT_W / max_value if math.isfinite(max_value) and max_value > 0 else 0

    def length(value: float) -> float:  # pixels, always a finite number on the plot
        px = value * scale
        return min(max(px, 0.0), PLOT_W) if math.isfinite(px) else (PLOT_W if px > 0 else 0.0)

    parts = []
    for i, bar in enumerate(bars):
        y = 4 + i * (BAR_H + GAP)
        parts.append(el("text", bar.label, x=LABEL_W - 6, y=y + BAR_H - 4, text_anchor="end"))
        parts.append(el("rect", el("title", bar.title), x=LABEL_W, y=y, height=BAR_H,
                        width=f"{max(length(bar.value), 1):.1f}", fill=bar.color))
        parts.append(el("text", fmt(bar.value), x=f"{LABEL_W + length(bar.value) + 4:.1f}", y=y + BAR_H - 4))
    if ref is not None:
        x = f"{LABEL_W + length(ref):.1f}"
        parts.append(el("line", x1=x, x2=x, y1=0, y2=height - 18, stroke="#24292f", stroke_dasharray="4 3"))
        parts.append(el("text", ref_label, x=x, y=height - 4, text_anchor="middle"))
    return el("svg", *parts, width=width, height=height,
              viewBox=f"0 0 {width} {height}", role="img", aria_label=aria)


def line_chart(series: Sequence[tuple], x_labels: Sequence[str], y_max: float, fmt: Callable[[float], str],
               aria: str = "") -> Markup:
    """series: (name, [value or None per x], color). Gaps (None) break the line."""
    width, height, left, bottom = 640, 220, 50, 40
    plot_w, plot_h = width - left - 150, height - bottom - 10
    n = max(len(x_labels) - 1, 1)
    x_of = lambda i: left + plot_w * i / n  # noqa: E731
    y_of = lambda v: 10 + plot_h * (1 - (v / y_max if y_max else 0))  # noqa: E731
    parts = [el("line", x1=left, x2=left + plot_w, y1=10 + plot_h, y2=10 + plot_h, stroke="#8c959f"),
             el("text", fmt(y_max), x=left - 4, y=14, text_anchor="end"),
             el("text", fmt(0), x=left - 4, y=10 + plot_h, text_anchor="end")]
    for i, label in enumerate(x_labels):
        parts.append(el("text", label, x=f"{x_of(i):.1f}", y=height - bottom + 16, text_anchor="middle"))
    for k, (name, values, color) in enumerate(series):
        points = [(x_of(i), y_of(v)) for i, v in enumerate(values) if v is not None]
        if len(points) > 1:
            parts.append(el("polyline", points=" ".join(f"{x:.1f},{y:.1f}" for x, y in points), fill="none",
                            stroke=color, stroke_width=2))
        for (x, y), v in zip(points, [v for v in values if v is not None]):
            parts.append(el("circle", el("title", f"{name}: {fmt(v)}"), cx=f"{x:.1f}", cy=f"{y:.1f}", r=3, fill=color))
        parts.append(el("text", name, x=left + plot_w + 10, y=20 + 14 * k, fill=color))
    return el("svg", *parts, width=width, height=height,
              viewBox=f"0 0 {width} {height}", role="img", aria_label=aria)


class RangeBar(NamedTuple):
    """A bar at `value` (the median) with a whisker from `lo` to `hi` (min..max); `note` follows the value."""
    label: str
    value: float
    color: str
    title: str
    lo: Optional[float] = None
    hi: Optional[float] = None
    note: str = ""


class BarGroup(NamedTuple):
    """Bars under one heading (an op and its case), with an optional reference line over just them."""
    title: str
    bars: List[RangeBar]
    ref: Optional[float] = None
    ref_label: str = ""


GROUP_LABEL_W, GROUP_VALUE_W, HEADING_H = 90, 200, 18


def grouped_hbar_chart(groups: List[BarGroup], max_value: float, fmt: Callable[[float], str],
                       aria: str = "") -> Markup:
    """Bars grouped under headings: each group's title gets a row of its own (never clipped), its bars
    are labelled by the short impl name, and its reference (e.g. the same-size triad) is a dashed
    line spanning the group's rows with its label at the end."""
    width = GROUP_LABEL_W + PLOT_W + GROUP_VALUE_W
    scale = PLOT_W / max_value if math.isfinite(max_value) and max_value > 0 else 0

    def length(value: Optional[float]) -> float:
        if value is None:
            return 0.0
        px = value * scale
        return min(max(px, 0.0), PLOT_W) if math.isfinite(px) else (PLOT_W if px > 0 else 0.0)

    parts, y = [], 4
    for group in groups:
        parts.append(el("text", group.title, x=4, y=y + HEADING_H - 5, font_weight="bold"))
        y += HEADING_H
        top = y
        for bar in group.bars:
            parts.append(el("text", bar.label, x=GROUP_LABEL_W - 6, y=y + BAR_H - 4, text_anchor="end"))
            parts.append(el("rect", el("title", bar.title), x=GROUP_LABEL_W, y=y, height=BAR_H,
                            width=f"{max(length(bar.value), 1):.1f}", fill=bar.color))
            if bar.lo is not None and bar.hi is not None:
                x1, x2, mid = GROUP_LABEL_W + length(bar.lo), GROUP_LABEL_W + length(bar.hi), y + BAR_H / 2
                parts.append(el("line", x1=f"{x1:.1f}", x2=f"{x2:.1f}", y1=f"{mid:.1f}", y2=f"{mid:.1f}",
                                stroke="#24292f", stroke_width=1.5, class_="whisker"))
                for x in (x1, x2):
                    parts.append(el("line", x1=f"{x:.1f}", x2=f"{x:.1f}", y1=y + 3, y2=y + BAR_H - 3, stroke="#24292f"))
            end = max(length(bar.value), length(bar.hi))
            parts.append(el("text", fmt(bar.value) + (f" {bar.note}" if bar.note else ""),
                            x=f"{GROUP_LABEL_W + end + 4:.1f}", y=y + BAR_H - 4))
            y += BAR_H + GAP
        if group.ref is not None and group.bars:
            x = f"{GROUP_LABEL_W + length(group.ref):.1f}"
            parts.append(el("line", el("title", group.ref_label), x1=x, x2=x, y1=top - 2, y2=y - GAP + 2,
                            stroke="#cf222e", stroke_width=1.5, stroke_dasharray="4 3", class_="ref"))
        y += GAP
    height = y + 4
    return el("svg", *parts, width=width, height=height,
              viewBox=f"0 0 {width} {height}", role="img", aria_label=aria)


class ScalePoint(NamedTuple):
    """One figure of a scaling chart: at size index `x`, `value` with its spread `lo`..`hi`."""
    x: int
    value: float
    title: str
    lo: Optional[float] = None
    hi: Optional[float] = None
    noisy: bool = False


class ScaleLine(NamedTuple):
    name: str
    color: str
    points: List[ScalePoint]
    dashed: bool = False  # a reference (the triad), drawn without markers


class ScaleMarker(NamedTuple):
    """A lone mark (a baseline figure), joined by an arrow to the current figure at the same size."""
    x: int
    value: float
    to_value: float
    color: str
    title: str
    label: str


SCALE_W, SCALE_H, SCALE_LEFT, SCALE_BOTTOM, SCALE_TOP, SCALE_LEGEND = 560, 240, 62, 36, 12, 120


def _ticks(lo: float, hi: float, log: bool) -> List[float]:
    if log:
        first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        decades = range(first, last + 1, max(1, (last - first) // 8))  # at most ~9 labels however wide
        ticks = [10.0 ** e for e in decades]
        for steps in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7)):  # a narrow range: finer steps, so the axis has labels
            if sum(lo <= t <= hi for t in ticks) < 3:
                ticks = sorted(m * 10.0 ** e for e in decades for m in steps)
        return ticks
    step = 10 ** math.floor(math.log10(hi / 4)) if hi > 0 else 1
    step *= next((m for m in (1, 2, 5, 10) if hi / (step * m) <= 5), 10)
    return [i * step for i in range(int(hi / step) + 1)]


def scaling_chart(sizes: Sequence[str], positions: Sequence[float], lines: Sequence[ScaleLine],
                  fmt: Callable[[float], str], log_y: bool = False, ref: Optional[float] = None,
                  ref_label: str = "", markers: Sequence[ScaleMarker] = (), width: int = SCALE_W,
                  legend: bool = True, aria: str = "") -> Markup:
    """A line per impl against size: x at `positions` (e.g. log2 of each size, in the order given), y linear
    from 0 or (log_y) logarithmic; a whisker spans each point's lo..hi; noisy points are hollow and
    ringed; a dashed line is a reference series; `ref` a horizontal reference (e.g. ratio 1)."""
    plot_w = width - SCALE_LEFT - (SCALE_LEGEND if legend else 12)
    plot_h = SCALE_H - SCALE_BOTTOM - SCALE_TOP
    def drawable(v: Optional[float]) -> bool:  # a bundle's figures may be 0, huge or infinite: never drawn as such
        return v is not None and math.isfinite(v) and 0 < v < 1e300

    lines = [line._replace(points=[p if drawable(p.lo) and drawable(p.hi) else p._replace(lo=None, hi=None)
                                   for p in line.points if drawable(p.value)]) for line in lines]
    markers = [m for m in markers if drawable(m.value) and drawable(m.to_value)]
    values = [v for line in lines for p in line.points for v in (p.value, p.lo, p.hi) if v is not None]
    values += [v for m in markers for v in (m.value, m.to_value)] + ([ref] if drawable(ref) else [])
    if not values:
        values = [1.0]
    if not all(math.isfinite(x) for x in positions):
        positions = [float(i) for i in range(len(sizes))]
    top = max(values) * (1.25 if log_y else 1.1)
    bottom = min(values) / 1.25 if log_y else 0.0
    x0, x1 = (min(positions), max(positions)) if positions else (0.0, 1.0)
    span = (x1 - x0) or 1.0

    def x_of(i: int) -> float:
        if len(positions) == 1:
            return SCALE_LEFT + plot_w / 2
        return SCALE_LEFT + 10 + (plot_w - 20) * (positions[i] - x0) / span

    def y_of(v: float) -> float:
        if log_y:
            v = max(v, bottom)
            frac = (math.log(v) - math.log(bottom)) / ((math.log(top) - math.log(bottom)) or 1.0)
        else:
            frac = v / top if top > 0 else 0.0
        return SCALE_TOP + plot_h * (1 - min(max(frac, 0.0), 1.0))

    base_y = SCALE_TOP + plot_h
    parts = [el("line", x1=SCALE_LEFT, x2=SCALE_LEFT + plot_w, y1=base_y, y2=base_y, stroke="#8c959f"),
             el("line", x1=SCALE_LEFT, x2=SCALE_LEFT, y1=SCALE_TOP, y2=base_y, stroke="#8c959f")]
    for tick in _ticks(bottom if log_y else 0.0, top, log_y):
        if bottom <= tick <= top:
            y = f"{y_of(tick):.1f}"
            parts.append(el("line", x1=SCALE_LEFT, x2=SCALE_LEFT + plot_w, y1=y, y2=y, stroke="#eaeef2"))
            parts.append(el("text", fmt(tick), x=SCALE_LEFT - 4, y=f"{y_of(tick) + 4:.1f}", text_anchor="end",
                            class_="y-label"))
    for i, size in enumerate(sizes):
        parts.append(el("text", size, x=f"{x_of(i):.1f}", y=base_y + 16, text_anchor="middle", class_="x-label",
                        data_size=size))
    if ref is not None:
        y = f"{y_of(ref):.1f}"
        parts.append(el("line", el("title", ref_label), x1=SCALE_LEFT, x2=SCALE_LEFT + plot_w, y1=y, y2=y,
                        stroke="#24292f", stroke_dasharray="4 3", class_="ref"))
    for k, line in enumerate(lines):
        coords = [(x_of(p.x), y_of(p.value)) for p in line.points]
        if len(coords) > 1:
            parts.append(el("polyline", el("title", line.name), points=" ".join(f"{x:.1f},{y:.1f}" for x, y in coords),
                            fill="none", stroke=line.color, stroke_width=1.5 if line.dashed else 2,
                            stroke_dasharray="6 4" if line.dashed else None,
                            class_="ref-line" if line.dashed else "series", data_series=line.name))
        for p, (x, y) in zip(line.points, coords):
            if p.lo is not None and p.hi is not None and p.lo > 0 and p.hi > 0:
                parts.append(el("line", x1=f"{x:.1f}", x2=f"{x:.1f}", y1=f"{y_of(p.hi):.1f}", y2=f"{y_of(p.lo):.1f}",
                                stroke=line.color, stroke_width=1, class_="whisker"))
            if line.dashed and len(coords) > 1:
                continue
            parts.append(el("circle", el("title", p.title), cx=f"{x:.1f}", cy=f"{y:.1f}", r=4 if p.noisy else 3,
                            fill="#fff" if p.noisy else line.color, stroke=line.color, stroke_width=2 if p.noisy else 1,
                            class_="point noisy" if p.noisy else "point", data_series=line.name, data_size=sizes[p.x]))
        if legend:
            ly = SCALE_TOP + 6 + 14 * k
            lx = SCALE_LEFT + plot_w + 10
            parts.append(el("line", x1=lx, x2=lx + 14, y1=ly - 4, y2=ly - 4, stroke=line.color, stroke_width=2,
                            stroke_dasharray="6 4" if line.dashed else None))
            parts.append(el("text", line.name, x=lx + 18, y=ly, class_="legend"))
    for m in markers:
        x, y, y2 = x_of(m.x), y_of(m.value), y_of(m.to_value)
        parts.append(el("line", x1=f"{x:.1f}", x2=f"{x:.1f}", y1=f"{y:.1f}", y2=f"{y2:.1f}", stroke=m.color,
                        stroke_width=2, stroke_dasharray="2 2"))
        parts.append(el("rect", el("title", m.title), x=f"{x - 4:.1f}", y=f"{y - 4:.1f}", width=8, height=8,
                        fill="none", stroke=m.color, stroke_width=2, class_="baseline-mark", data_size=sizes[m.x]))
        right = x > SCALE_LEFT + plot_w * 0.75  # near the legend: the label goes left of the mark
        parts.append(el("text", m.label, x=f"{x - 6 if right else x + 6:.1f}", y=f"{(y + y2) / 2 + 4:.1f}",
                        fill=m.color, text_anchor="end" if right else None, class_="baseline-label"))
    return el("svg", *parts, width=width, height=SCALE_H, viewBox=f"0 0 {width} {SCALE_H}", role="img",
              aria_label=aria)
