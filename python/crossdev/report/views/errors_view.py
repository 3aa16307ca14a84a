"""Input bundles that could not be used, with the reason; the rest of the report still merges them."""
from crossdev.report.merge import Report
from crossdev.report.views.h import el


def render(report: Report):
    if not report.errors:
        return None
    return el("ul", *(el("li", el("pre", e.message)) for e in report.errors), class_="input-errors")
