"""A tiny HTML builder that escapes by default: only Markup passes through unescaped.

Every string from a bundle (case ids, messages, host names) reaches the page through here, so
a case id holding "<script>" renders as text.
"""
import html
import math
from typing import Iterable, Optional

from crossdev.case_statuses import GATING_STATUSES
from crossdev.report.bundle import NonFinite


class Markup(str):
    """HTML that is already safe (built by el() or from trusted literals)."""


def esc(value) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def join(parts: Iterable, sep: str = "") -> Markup:
    """Joins parts, escaping those that are not Markup; None parts are dropped."""
    return Markup(esc(sep).join(esc(p) for p in parts if p is not None))


def el(tag: str, *children, **attrs) -> Markup:
    """el("td", "text", class_="x", data_id="y") -> <td class="x" data-id="y">text</td>."""
    rendered = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        rendered.append(name if value is True else f'{name}="{esc(value)}"')
    open_tag = f"<{tag}{' ' if rendered else ''}{' '.join(rendered)}>"
    if tag in ("br", "meta", "hr", "img", "input", "link"):
        return Markup(open_tag)
    return Markup(open_tag + join(children) + f"</{tag}>")


class Cell(Markup):
    """A finished <td>; table() wraps anything else in a plain one."""


def td(*children, **attrs) -> Cell:
    return Cell(el("td", *children, **attrs))


def tr(cells: Iterable, **attrs) -> Markup:
    return el("tr", *(c if isinstance(c, Cell) else td(c) for c in cells), **attrs)


def table(header: Iterable, rows: Iterable, **attrs) -> Markup:
    """rows: each a finished tr() or an iterable of cells."""
    head = el("thead", el("tr", *(el("th", h) for h in header)))
    body = el("tbody", *(row if isinstance(row, Markup) else tr(row) for row in rows))
    return el("table", head, body, **attrs)


# The badge colour of each status: every status that gates (case_statuses.json) is red.
STATUS_CLASS = {"pass": "ok", "xfail": "xf", "skip": "sk", **{s: "bad" for s in GATING_STATUSES}}


def status_badge(status: str) -> Markup:
    return el("span", status, class_=f"badge st-{STATUS_CLASS.get(status, 'sk')}")


def execution_badge(execution: str) -> Markup:
    """Simulated and not-run results are labelled wherever a result appears."""
    if execution == "simulated":
        return el("span", "SIMULATED", class_="badge sim", title="ran against a simulated device or host profile")
    if execution == "not_run":
        return el("span", "not run", class_="badge st-sk")
    return el("span", "real", class_="badge real")


def fmt_number(value: Optional[float], digits: int = 3) -> str:
    """None: "—" (not measured); a null metric: "non-finite"; NaN and infinities: "nan", "inf", "-inf"."""
    if value is None:
        return "—"
    if isinstance(value, NonFinite):
        return "non-finite"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if abs(value) < 1e15 and value == int(value):
        return str(int(value))
    return f"{value:.{digits}g}"
