"""The self-contained HTML page: inline CSS, JS and SVG, no external request.

A Content-Security-Policy forbids every fetch and allows only the one inline script (by hash),
so even an escaping bug in a view could neither run injected script nor phone home.
"""
import base64
import gzip
import hashlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, List, NamedTuple, Optional

from crossdev.report.merge import Report
from crossdev.report.views import (baseline_view, bench_view, cross_machine_view, errors_view, failures_view, gate_power_view,
                                   manager_view, models_view, opinfo_view, redirect_view, scoreboard_view, suites_view,
                                   summary_view, trends_view)
from crossdev.report.views.h import Markup, el, join

_ASSETS = Path(__file__).resolve().parent / "assets"


class Section(NamedTuple):
    anchor: str
    title: str
    render: Callable[[Report], Optional[Markup]]
    # Shown as "not in these bundles" when render returns None; optional sections just disappear.
    always: bool
    # A large body (LAZY_MIN_BYTES or more) is gzip-compressed and base64-encoded inside the page and shown on
    # demand (report.js, with the browser's DecompressionStream): the file stays one offline file, small.
    lazy: bool = False


LAZY_MIN_BYTES = 64 << 10


# The page, top to bottom: the first screen shows the verdict, what failed and what changed against the
# baseline. Adding a view = one module with render(report) + one row here.
SECTIONS: List[Section] = [
    Section("input-errors", "Unusable bundles", errors_view.render, False),
    Section("summary", "Summary per runner", summary_view.render, True),
    Section("failures", "Failure details", failures_view.render, True),
    Section("baseline", "Benchmarks against the baseline", baseline_view.render, False),  # --baseline
    Section("scoreboard", "Cross-device parity scoreboard", scoreboard_view.render, True),
    Section("opinfo", "OpInfo parity: ATen operators", opinfo_view.render, False, lazy=True),
    Section("gate-power", "What this gate catches", gate_power_view.render, False),  # crossdev report --gate-power
    Section("cross-machine", "Cross-machine: one set of samples on two runners", cross_machine_view.render, False),
    Section("models", "Model parity: the error along the depth", models_view.render, False, lazy=True),
    Section("redirect", "Seed 002 redirect policy", redirect_view.render, True),
    Section("manager", "Device manager and error recovery", manager_view.render, True),
    Section("benchmarks", "Benchmarks", bench_view.render, True),
    Section("trends", "Trends", trends_view.render, False),
    Section("suites", "All cases by suite", suites_view.render, True, lazy=True),
]


def _verdict(report: Report) -> Markup:
    totals, pairs = report.totals(), len(report.cross_machine.failing())
    if totals.gating or report.errors or pairs:
        text = f"FAIL: {totals.gating} gating case(s), {len(report.errors)} unusable bundle(s)" + \
            (f", {pairs} cross-machine case(s) differing" if pairs else "")
        return el("span", text, class_="verdict badge st-bad", id="verdict")
    return el("span", "PASS", class_="verdict badge st-ok", id="verdict")


def compressed(body: Markup) -> Markup:
    """The section's HTML, gzip-compressed (mtime 0: the same report gives the same bytes) and base64-encoded
    into a data attribute (its alphabet needs no escaping), with a button that opens it; a link to any id
    inside it opens it too (report.js)."""
    raw = body.encode("utf-8")
    data = base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")
    return el("div", el("button", f"Show this section ({len(raw) / 1e6:.1f} MB of HTML, compressed into this file)",
                        type="button", class_="lazy-open"),
              el("noscript", "This section is stored compressed in the page and needs JavaScript to be shown; "
                             "summary.md, junit.xml and the bundle hold the same cases."),
              class_="lazy", data_gz=data, data_bytes=len(raw))


def render_page(report: Report, title: str = "crossdev conformance report") -> str:
    css = (_ASSETS / "report.css").read_text(encoding="utf-8")
    js = (_ASSETS / "report.js").read_text(encoding="utf-8")
    script_hash = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{script_hash}'; "
           "base-uri 'none'; form-action 'none'")

    sections, nav = [], []
    for s in SECTIONS:
        body = s.render(report)
        if body is None:
            if not s.always:
                continue
            body = el("p", "Not in these bundles.", class_="note")
        if s.lazy and len(body) >= LAZY_MIN_BYTES:
            body = compressed(body)
        nav.append(el("a", s.title, href=f"#{s.anchor}"))
        sections.append(el("section", el("h2", s.title), body, id=s.anchor))

    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    runners = ", ".join(r.label for r in report.runners) or "none"
    head = join([
        Markup('<meta charset="utf-8">'),
        el("meta", http_equiv="Content-Security-Policy", content=csp),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("title", title),
        Markup(f"<style>\n{css}</style>"),
    ])
    bench = baseline_view.badge(report.baseline) if report.baseline is not None else None
    header = el("header", el("h1", title, _verdict(report), bench),
                el("div", f"{len(report.runners)} runner(s): {runners}. Generated {generated}.", class_="note"))
    body = join([header, el("nav", *nav), el("main", *sections), Markup(f"<script>{js}</script>")])
    return f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>{head}</head>\n<body>{body}</body>\n</html>\n"
