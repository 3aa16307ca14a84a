"""The models section's pictures (inline SVG, no library): the error along the depth on a log scale,
and the train check's loss curves. Every string reaches the SVG escaped, through h.el."""
import math
from typing import List, NamedTuple, Optional, Sequence

from crossdev.report.views.h import Markup, el
from crossdev.report.views.svg import COLORS

LEFT, TOP, PLOT_H, LEGEND_W, LABEL_H, STEP_W, MIN_PLOT_W = 60, 14, 200, 230, 120, 16, 360
BAND = "#dafbe1"  # within the dtype's tolerance
FAIL = "#cf222e"


class Point(NamedTuple):
    x: int  # position along the depth
    inherited: Optional[float]  # None: unknown
    inherited_passed: Optional[bool]
    own: Optional[float]
    own_passed: Optional[bool]


class Line(NamedTuple):
    """One device's points along the depth; `divergence` is the x of its first divergence, if any."""
    name: str
    points: List[Point]
    divergence: Optional[int] = None
    divergence_label: str = ""


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class LogScale:
    """Decades that hold every positive finite value; zero and below sit on the floor, inf on the ceiling."""

    def __init__(self, values: Sequence):
        positive = [float(v) for v in values if _finite(v) and v > 0]
        # Decades a float64 can spell as 10.0 ** d (subnormals sit on the floor).
        self.lo = max(math.floor(math.log10(min(positive))), -307) if positive else -9
        self.hi = min(math.ceil(math.log10(max(positive))), 308) if positive else 0
        if self.hi <= self.lo:
            self.lo = min(self.lo, 307)
            self.hi = self.lo + 1
        self.step = max(1, math.ceil((self.hi - self.lo) / 12))  # at most about a dozen grid lines

    def y(self, value: float) -> float:
        if not _finite(value):
            share = 1.0 if value is not None and value > 0 else 0.0  # inf: top; -inf, nan: floor
        elif value <= 0:
            share = 0.0
        else:
            share = (math.log10(value) - self.lo) / (self.hi - self.lo)
        return TOP + PLOT_H * (1 - min(max(share, 0.0), 1.0))


def _fmt(value) -> str:
    if value is None:
        return "unknown"
    if not _finite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    return "0" if value == 0 else f"{value:.3g}"


def _verdict(passed) -> str:
    return {True: "ok", False: "OUT OF TOLERANCE"}.get(passed, "verdict unknown")


def depth_chart(labels: List[str], limits: List[Optional[float]], lines: List[Line], aria: str) -> Markup:
    """x: module calls along the depth (labels), y: max_abs against the CPU golden on a log scale. Each
    line is a device: inherited solid, own dashed; a failing point is ringed red; the dtype's tolerance
    is a green band; a device's first divergence is a red vertical line."""
    n = max(len(labels), 1)
    plot_w = max(MIN_PLOT_W, STEP_W * n)
    width, height = LEFT + plot_w + LEGEND_W, TOP + PLOT_H + LABEL_H
    scale = LogScale([v for line in lines for p in line.points for v in (p.inherited, p.own)] + list(limits))
    x_of = lambda i: LEFT + plot_w * (i + 0.5) / n  # noqa: E731
    bottom = TOP + PLOT_H
    parts = []
    band = [(x_of(i), scale.y(v)) for i, v in enumerate(limits) if _finite(v)]
    if band:
        outline = [(band[0][0], bottom)] + band + [(band[-1][0], bottom)]
        parts.append(el("polygon", el("title", "within the dtype's tolerance (atol + rtol x max|golden|)"),
                        points=" ".join(f"{x:.1f},{y:.1f}" for x, y in outline), fill=BAND, class_="tolerance"))
        parts.append(el("polyline", points=" ".join(f"{x:.1f},{y:.1f}" for x, y in band), fill="none",
                        stroke="#1a7f37", stroke_width=1, class_="limit"))
    for decade in range(scale.lo, scale.hi + 1, scale.step):
        y = scale.y(10.0 ** decade)
        parts.append(el("line", x1=LEFT, x2=LEFT + plot_w, y1=f"{y:.1f}", y2=f"{y:.1f}", stroke="#eaeef2"))
        parts.append(el("text", f"1e{decade}", x=LEFT - 4, y=f"{y + 4:.1f}", text_anchor="end"))
    parts.append(el("line", x1=LEFT, x2=LEFT + plot_w, y1=bottom, y2=bottom, stroke="#8c959f"))
    for i, label in enumerate(labels):
        x = x_of(i)
        parts.append(el("text", el("title", label), label if len(label) <= 22 else label[:21] + "…",
                        x=f"{x:.1f}", y=bottom + 10, text_anchor="end", font_size="10",
                        transform=f"rotate(-60 {x:.1f} {bottom + 10})"))
    for k, line in enumerate(lines):
        color = COLORS[k % len(COLORS)]
        for kind, dash in (("inherited", None), ("own", "5 3")):
            known = [(p.x, getattr(p, kind), getattr(p, kind + "_passed")) for p in line.points
                     if getattr(p, kind) is not None]
            if not known:
                continue
            coords = [(x_of(x), scale.y(v)) for x, v, _ in known]
            parts.append(el("polyline", el("title", f"{line.name}: {kind} error"),
                            points=" ".join(f"{x:.1f},{y:.1f}" for x, y in coords), fill="none", stroke=color,
                            stroke_width=2 if kind == "inherited" else 1.5, stroke_dasharray=dash, class_=kind))
            for (x, value, passed), (cx, cy) in zip(known, coords):
                parts.append(el("circle", el("title", f"{line.name} {labels[x] if x < len(labels) else x}: {kind} "
                                                      f"{_fmt(value)} ({_verdict(passed)})"),
                                cx=f"{cx:.1f}", cy=f"{cy:.1f}", r=4 if passed is False else 2.5,
                                fill=color if kind == "inherited" else "#fff", stroke=FAIL if passed is False else color,
                                stroke_width=2 if passed is False else 1, class_="fails" if passed is False else None))
        if line.divergence is not None and line.divergence < n:
            x = x_of(line.divergence)
            parts.append(el("line", el("title", f"{line.name}: first divergence {line.divergence_label}"),
                            x1=f"{x:.1f}", x2=f"{x:.1f}", y1=TOP, y2=bottom, stroke=FAIL, stroke_width=1.5,
                            stroke_dasharray="2 2", class_="divergence"))
            right_half = x > LEFT + plot_w / 2  # the label runs away from the legend
            parts.append(el("text", f"first divergence: {line.divergence_label}", x=f"{x - 3 if right_half else x + 3:.1f}",
                            y=TOP + 10 + 12 * k, fill=FAIL, text_anchor="end" if right_half else None))
    legend_x = LEFT + plot_w + 14
    for k, line in enumerate(lines):
        y = TOP + 8 + 16 * k
        parts.append(el("line", x1=legend_x, x2=legend_x + 22, y1=y - 4, y2=y - 4, stroke=COLORS[k % len(COLORS)],
                        stroke_width=2))
        parts.append(el("text", line.name, x=legend_x + 28, y=y))
    y = TOP + 8 + 16 * len(lines) + 6
    parts.append(el("text", "solid: inherited (full run)", x=legend_x, y=y, fill="#57606a"))
    parts.append(el("text", "dashed: own (teacher forced)", x=legend_x, y=y + 14, fill="#57606a"))
    parts.append(el("text", "green: the dtype's tolerance", x=legend_x, y=y + 28, fill="#57606a"))
    parts.append(el("text", "red ring: out of tolerance", x=legend_x, y=y + 42, fill="#57606a"))
    return el("svg", *parts, width=width, height=height, viewBox=f"0 0 {width} {height}", role="img",
              aria_label=aria, class_="depth-chart")


class Curve(NamedTuple):
    name: str
    values: List[Optional[float]]
    color: str
    dashed: bool = False


def loss_chart(curves: List[Curve], aria: str) -> Markup:
    """The loss before each optimizer step and after the last (x: step), one curve per run, linear y
    over the values' own range (the curves of agreeing runs lie on each other)."""
    steps = max((len(c.values) for c in curves), default=0)
    plot_w = max(MIN_PLOT_W, 40 * steps)
    width, height = LEFT + plot_w + LEGEND_W, TOP + PLOT_H + 40
    values = [float(v) for c in curves for v in c.values if _finite(v)]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if hi / 2 - lo / 2 <= abs(hi) * 1e-12:  # one value (or all agree to 12 digits): centre it
        lo, hi = lo - 0.5 * (abs(lo) or 1.0), hi + 0.5 * (abs(hi) or 1.0)
    x_of = lambda i: LEFT + plot_w * (i + 0.5) / max(steps, 1)  # noqa: E731

    def y_of(v):
        if not _finite(v):
            return TOP if v is not None and v > 0 else TOP + PLOT_H
        span = hi / 2 - lo / 2  # halves: no overflow between the largest floats
        share = (v / 2 - lo / 2) / span if span > 0 else 0.5
        return TOP + PLOT_H * (1 - min(max(share, 0.0), 1.0))

    bottom = TOP + PLOT_H
    parts = [el("line", x1=LEFT, x2=LEFT + plot_w, y1=bottom, y2=bottom, stroke="#8c959f"),
             el("text", f"{hi:.6g}", x=LEFT - 4, y=TOP + 4, text_anchor="end"),
             el("text", f"{lo:.6g}", x=LEFT - 4, y=bottom, text_anchor="end")]
    for i in range(steps):
        parts.append(el("text", str(i), x=f"{x_of(i):.1f}", y=bottom + 14, text_anchor="middle"))
    parts.append(el("text", "optimizer steps taken", x=f"{LEFT + plot_w / 2:.1f}", y=bottom + 30,
                    text_anchor="middle", fill="#57606a"))
    for k, curve in enumerate(curves):
        known = [(i, v) for i, v in enumerate(curve.values) if v is not None]
        coords = [(x_of(i), y_of(v)) for i, v in known]
        if coords:
            parts.append(el("polyline", el("title", curve.name), points=" ".join(f"{x:.1f},{y:.1f}" for x, y in coords),
                            fill="none", stroke=curve.color, stroke_width=2, class_="loss",
                            stroke_dasharray="5 3" if curve.dashed else None))
        for (i, v), (cx, cy) in zip(known, coords):
            parts.append(el("circle", el("title", f"{curve.name} after {i} step(s): {_fmt(v)}"), cx=f"{cx:.1f}",
                            cy=f"{cy:.1f}", r=2.5, fill=curve.color))
        y = TOP + 8 + 16 * k
        legend_x = LEFT + plot_w + 14
        parts.append(el("line", x1=legend_x, x2=legend_x + 22, y1=y - 4, y2=y - 4, stroke=curve.color, stroke_width=2,
                        stroke_dasharray="5 3" if curve.dashed else None))
        parts.append(el("text", curve.name, x=legend_x + 28, y=y))
    return el("svg", *parts, width=width, height=height, viewBox=f"0 0 {width} {height}", role="img",
              aria_label=aria, class_="loss-chart")
