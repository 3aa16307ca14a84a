"""Summary per runner: what it ran on (execution_target) and how its cases ended."""
from crossdev.report.merge import Report
from crossdev.report.schema import GATING_STATUSES
from crossdev.report.summary_md import COUNTED_STATUSES, skip_reason_meaning, skips_by_reason
from crossdev.report.views.h import Markup, el, esc, join, table, td

_COUNT_COLUMNS = COUNTED_STATUSES


def _devices(target) -> Markup:
    items = []
    for d in target.get("devices", []):
        cls = "badge real" if d["provenance"] == "real" else "badge sim"
        text = f"{d['kind']} x{d['count']}" + ("" if d["provenance"] == "real" else " SIMULATED")
        items.append(el("span", text, class_=cls, title=", ".join(d.get("names", []))))
    return join(items, " ") if items else esc("—")


def _runner_row(report: Report, runner) -> list:
    t = runner.target
    c = report.counts(runner)
    kind = el("span", "includes SIMULATED", class_="badge sim") if runner.simulated else el("span", "real", class_="badge real")
    return [
        td(el("b", runner.label), el("br"), el("small", runner.path)),
        td(kind, el("br"), el("small", t.get("simulate_spec", ""))),
        _devices(t),
        td(t.get("device_model", ""), el("br"), el("small", t.get("driver", ""))),
        td(f"LibTorch {t.get('libtorch_version', '')}", el("br"),
           el("small", f"CUDA {t['cuda_version']}" if t.get("cuda_version") else "")),
        t.get("compiler", ""),
        td(el("code", t.get("git_commit", "")[:12]), el("br"), el("small", runner.created)),
        td(str(c.real_pass), class_="num"),
        td(str(c.simulated_pass), class_="num sim-col"),
        *(td(str(c.by_status[s]), class_="num" + (" hot" if c.by_status[s] and s in GATING_STATUSES else ""))
          for s in _COUNT_COLUMNS),
    ]


def _skips(report: Report):
    """Skips by reason: the opinfo suite's skip cases per runner x details.skip_reason (SKIP_REASONS), so that
    a case that stopped running is seen, not lost in the skip total. None when no opinfo case was skipped."""
    reasons, counts = skips_by_reason(report)
    if not reasons:
        return None
    header = ["runner", *(el("span", r, title=skip_reason_meaning(r)) for r in reasons), "total"]
    rows = [[td(el("b", runner.label)),
             *(td(str(counts[runner.label][r]), class_="num", data_reason=r) for r in reasons),
             td(str(sum(counts[runner.label].values())), class_="num")] for runner in report.runners]
    legend = el("ul", *(el("li", el("code", r), ": ", skip_reason_meaning(r)) for r in reasons), class_="note")
    return join([el("h3", "Skips by reason (opinfo)"), table(header, rows, class_="grid", id="skip-reasons"),
                 el("details", el("summary", "what each reason means"), legend)])


def render(report: Report):
    if not report.runners:
        return el("p", "No usable bundle was given.", class_="warn")
    header = ["runner", "execution", "devices", "model / driver", "versions", "compiler", "commit / created",
              "pass (real)", "pass (simulated)", *_COUNT_COLUMNS]
    totals = report.totals()
    note = el("p", f"{totals.real_pass} case(s) passed on real devices; {totals.simulated_pass} passed against "
                   "simulated devices or host profiles and are not counted as real-device passes.")
    return join([table(header, (_runner_row(report, r) for r in report.runners), class_="grid", id="runners"), note,
                 _skips(report)])
