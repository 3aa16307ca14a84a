"""The Markdown summary for CI job summaries ($GITHUB_STEP_SUMMARY): runners, verdict, failures.

Job summaries render inline HTML, so every value is escaped like HTML as well as for tables.
"""
from crossdev.report.merge import Report
from crossdev.report.schema import GATING_STATUSES, STATUSES

COUNTED_STATUSES = tuple(s for s in STATUSES if s != "pass")  # pass is split into real and simulated

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
