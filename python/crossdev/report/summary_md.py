"""The Markdown summary for CI job summaries ($GITHUB_STEP_SUMMARY): runners, verdict, failures.

Job summaries render inline HTML, so every value is escaped like HTML as well as for tables.
"""
from collections import Counter
from typing import Dict, List, Tuple

from crossdev.opinfo.skip_reasons import SKIP_REASONS  # the one table of reasons (torch-free)
from crossdev.report.merge import Report
from crossdev.report.schema import GATING_STATUSES, STATUSES

COUNTED_STATUSES = tuple(s for s in STATUSES if s != "pass")  # pass is split into real and simulated
OTHER_SKIP_REASON = "other"  # a skip case without details.skip_reason


def skips_by_reason(report: Report) -> Tuple[List[str], Dict[str, Counter]]:
    """The opinfo suite's skip cases counted per runner by details.skip_reason (a key of SKIP_REASONS; a case
    without one counts as "other"): (the reasons seen, in SKIP_REASONS' order, then any other key, then "other";
    {runner label: Counter}), every runner listed. No opinfo skip at all: ([], {...})."""
    counts: Dict[str, Counter] = {}
    for runner in report.runners:
        counter = counts.setdefault(runner.label, Counter())
        for case in runner.cases:
            if case.get("suite") == "opinfo" and case.get("status") == "skip":
                reason = (case.get("details") or {}).get("skip_reason")
                counter[reason if isinstance(reason, str) and reason else OTHER_SKIP_REASON] += 1
    seen = set().union(*counts.values()) if counts else set()
    order = [r for r in SKIP_REASONS if r in seen]
    order += sorted(seen - set(SKIP_REASONS) - {OTHER_SKIP_REASON})
    order += [OTHER_SKIP_REASON] if OTHER_SKIP_REASON in seen else []
    return order, counts


def skip_reason_meaning(reason: str) -> str:
    if reason == OTHER_SKIP_REASON:
        return "no details.skip_reason recorded"
    return SKIP_REASONS.get(reason, "not a reason crossdev.opinfo.skip_reasons knows")

MAX_FAILURES_LISTED = 50


def md_escape(text) -> str:
    text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("|", "\\|").replace("`", "\\`").replace("*", "\\*").replace("_", "\\_")
    text = text.replace("[", "\\[").replace("]", "\\]")
    return " ".join(text.split())  # a newline would end the table row


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def render_markdown(report: Report) -> str:
    lines = ["# crossdev conformance report", ""]
    totals = report.totals()
    verdict = "FAIL" if totals.gating or report.errors else "PASS"
    lines.append(
        f"**Verdict: {verdict}**: {len(report.runners)} runner(s), {totals.total} case(s), "
        f"{totals.real_pass} passed on real devices, {totals.simulated_pass} passed simulated "
        f"(not counted as real), {totals.gating} gating failure(s), {len(report.errors)} unusable bundle(s)."
    )
    lines.append("")
    if report.errors:
        lines += ["## Unusable bundles", ""]
        for err in report.errors:
            lines.append(f"- {md_escape(err.message.splitlines()[0])}")
        lines.append("")

    lines += ["## Runners", ""]
    header = ["runner", "execution", "device", "libtorch", "commit", "real pass", "simulated pass",
              *COUNTED_STATUSES]
    lines += [_row(header), _row(["---"] * len(header))]
    for runner in report.runners:
        c = report.counts(runner)
        t = runner.target
        lines.append(_row([
            md_escape(runner.label),
            "SIMULATED kinds: " + md_escape(t.get("simulate_spec", "")) if runner.simulated else "real",
            md_escape(f"{t.get('device_model', '')} {t.get('driver', '')}".strip()),
            md_escape(t.get("libtorch_version", "")),
            md_escape(t.get("git_commit", "")[:12]),
            str(c.real_pass), str(c.simulated_pass),
            *(str(c.by_status[s]) for s in COUNTED_STATUSES),
        ]))
    lines.append("")

    reasons, skips = skips_by_reason(report)
    if reasons:
        lines += ["## Skips by reason (opinfo)", "", _row(["runner", *(md_escape(r) for r in reasons)]),
                  _row(["---"] * (len(reasons) + 1))]
        for runner in report.runners:
            lines.append(_row([md_escape(runner.label), *(str(skips[runner.label][r]) for r in reasons)]))
        lines += [""] + [f"- {md_escape(r)}: {md_escape(skip_reason_meaning(r))}" for r in reasons] + [""]

    failures = report.gating_cases()
    if failures:
        lines += ["## Gating failures", "", _row(["runner", "case", "status", "execution", "where", "reason"]),
                  _row(["---"] * 6)]
        for runner, case in failures[:MAX_FAILURES_LISTED]:
            lines.append(_row([
                md_escape(runner.label), md_escape(case["id"]), case["status"], case["execution"],
                md_escape(f"{case.get('file', '')}:{case.get('line', 0)}"), md_escape(case.get("message", "")),
            ]))
        if len(failures) > MAX_FAILURES_LISTED:
            lines.append(f"\n... and {len(failures) - MAX_FAILURES_LISTED} more (see index.html / junit.xml)")
        lines.append("")
    lines.append(f"Statuses that gate: {', '.join(GATING_STATUSES)}. An xfail does not gate.")
    return "\n".join(lines) + "\n"
