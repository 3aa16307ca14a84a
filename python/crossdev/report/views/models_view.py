"""Model parity (suite: models, docs/models.md): per model and dtype, the error along the depth on each
device (inherited solid, own dashed, the dtype's tolerance as a band, the first divergence marked),
the train check's loss curves (CPU golden, float64, each device), then a table of the cases with
their first divergence. Cases from bundles without `data` (older writers, skipped or erroring cases)
are in the table only."""
from typing import Dict, List, NamedTuple, Optional, Tuple

from crossdev.float64_rule import FACTOR as FLOAT64_RULE_FACTOR
from crossdev.report.bundle import metric
from crossdev.report.merge import Report
from crossdev.report.views.h import Markup, el, execution_badge, fmt_number, join, status_badge, table, td
from crossdev.report.views.models_chart import Curve, Line, Point, depth_chart, loss_chart
from crossdev.report.views.svg import COLORS

SUITE = "models"
PHASES = (("forward", "forward: module calls in execution order; error of each call's output"),
          ("backward", "backward: module calls in the order gradients reach them; error of the gradient at each "
                       "call's output (inherited) and of its input and parameter gradients (own)"))


class Entry(NamedTuple):
    runner: str
    case: dict

    @property
    def details(self) -> dict:
        details = self.case.get("details")
        return details if isinstance(details, dict) else {}

    @property
    def data(self) -> dict:
        data = self.case.get("data")
        return data if isinstance(data, dict) else {}

    def device_name(self, several_runners: bool) -> str:
        kind = str(self.details.get("device_kind") or str(self.case.get("device", "?")).split(":")[0])
        name = kind + (" (sim)" if self.case.get("execution") == "simulated" else "")
        return f"{name} @ {self.runner}" if several_runners else name


def collect(report: Report) -> Dict[Tuple[str, str], List[Entry]]:
    """(model row, dtype) -> its cases, in first-seen order."""
    groups: Dict[Tuple[str, str], List[Entry]] = {}
    for runner, case in report.cases():
        if case.get("suite") != SUITE:
            continue
        entry = Entry(runner.label, case)
        row = str(case.get("row_id") or str(case.get("id", "?")).split("/")[0])
        groups.setdefault((row, str(entry.details.get("dtype", "?"))), []).append(entry)
    return groups


def _divergence(entry: Entry, phase: str) -> Optional[str]:
    d = entry.details
    if not d.get("first_divergence") or d.get("first_divergence_phase") != phase:
        return None
    return str(d["first_divergence"]) + (f" at {d['first_divergence_op']}" if d.get("first_divergence_op") else "")


def _layers(entry: Entry, phase: str) -> List[dict]:
    layers = entry.data.get("layers")
    return [p for p in layers if isinstance(p, dict) and p.get("phase") == phase] if isinstance(layers, list) else []


def _depth_picture(model: str, dtype: str, entries: List[Entry], phase: str, several: bool) -> Optional[Markup]:
    with_points = [(e, _layers(e, phase)) for e in entries]
    with_points = [(e, points) for e, points in with_points if points]
    if not with_points:
        return None
    axis: Dict[object, int] = {}  # call index -> x, in the order the first case lists them
    labels, limits = [], []
    for _, points in with_points:
        for p in points:
            if p.get("call") not in axis:
                axis[p.get("call")] = len(labels)
                labels.append(str(p.get("module", "?")))
                limits.append(p.get("limit"))
    lines = []
    for entry, points in with_points:
        line_points = [Point(axis[p.get("call")], p.get("inherited"), p.get("inherited_passed"), p.get("own"),
                             p.get("own_passed")) for p in points]
        divergence, label = None, _divergence(entry, phase)
        if label is not None:
            call = entry.data.get("first_divergence_call")
            divergence = axis.get(call) if call in axis else next(
                (axis[p.get("call")] for p in points if p.get("module") == entry.details.get("first_divergence")
                 and p.get("own_passed") is False), None)
        lines.append(Line(entry.device_name(several), line_points, divergence, label or ""))
    aria = f"{model} {dtype}: {phase} error along the depth per device, log scale"
    return el("figure", el("figcaption", dict(PHASES)[phase]), depth_chart(labels, limits, lines, aria))


def _loss_picture(model: str, dtype: str, entries: List[Entry], several: bool) -> Optional[Markup]:
    with_losses = [(e, e.data["losses"]) for e in entries if isinstance(e.data.get("losses"), dict)]
    if not with_losses:
        return None
    first = with_losses[0][1]
    curves = [Curve("CPU golden", list(first.get("golden") or []), "#24292f"),
              Curve("float64 (CPU)", list(first.get("float64") or []), "#8c959f", dashed=True)]
    for k, (entry, losses) in enumerate(with_losses):
        curves.append(Curve(entry.device_name(several), list(losses.get("device") or []), COLORS[k % len(COLORS)]))
    aria = f"{model} {dtype}: the loss before each optimizer step and after the last, per run"
    return el("figure", el("figcaption", "train: the loss after each optimizer step (step 0: before the first)"),
              loss_chart(curves, aria))


def _max_abs(case: dict) -> str:
    parts = []
    for check in ("forward", "backward", "train"):
        value = metric(case, f"{check}_max_abs")
        if value is not None:
            parts.append(f"{check} {fmt_number(value)}")
    return ", ".join(parts)


def _table(groups: Dict[Tuple[str, str], List[Entry]]) -> Markup:
    rows = []
    for entries in groups.values():
        for entry in entries:
            case, d = entry.case, entry.details
            divergence = ""
            if d.get("first_divergence"):
                divergence = el("code", str(d["first_divergence"]),
                                f" at {d['first_divergence_op']}" if d.get("first_divergence_op") else "",
                                f" ({d['first_divergence_phase']})" if d.get("first_divergence_phase") else "")
            rows.append([entry.runner, td(el("code", str(case.get("id", "?")))), status_badge(str(case.get("status", "?"))),
                         execution_badge(str(case.get("execution", "?"))), str(case.get("device", "")), divergence,
                         td(el("small", _max_abs(case))), td(el("small", str(case.get("message", ""))))])
    return table(["runner", "case", "status", "execution", "device", "first divergence", "max_abs", "message"], rows,
                 class_="grid models")


def render(report: Report):
    groups = collect(report)
    if not groups:
        return None
    several = len({e.runner for entries in groups.values() for e in entries}) > 1
    parts = [el("p", "Each model on each device against its CPU golden (docs/models.md). The error of every module "
                     "call along the depth, on a log scale: inherited (the device's full run: errors of earlier layers "
                     "included) solid, own (the call alone on the golden's inputs, measured only when a check fails) "
                     "dashed; an exact 0 sits on the bottom line. The green band is the dtype's tolerance on max_abs; a "
                     "call also passes when the device "
                     f"is within {FLOAT64_RULE_FACTOR:g}x the CPU's own error against float64 (the float64 rule), so the verdict (a red ring when out of "
                     "tolerance) is what counts. The first divergence is the innermost call, first in order, whose "
                     "own error is out of tolerance.", class_="note")]
    for (model, dtype), entries in groups.items():
        pictures = [_depth_picture(model, dtype, entries, phase, several) for phase, _ in PHASES]
        pictures.append(_loss_picture(model, dtype, entries, several))
        pictures = [p for p in pictures if p is not None]
        if pictures:
            parts.append(el("h3", model, " ", el("small", dtype)))
            parts.extend(pictures)
    parts.append(_table(groups))
    return join(parts)
