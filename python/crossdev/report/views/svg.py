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
