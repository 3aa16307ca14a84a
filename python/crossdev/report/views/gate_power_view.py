"""What this gate catches: bench/python/gate_power_bench.py's figures (`crossdev report --gate-power FILE`).

Each mutant of tests/mutants/aten/catalog.json is a deliberately wrong (bug) or legitimately different
(legitimate) ATen kernel loaded into sim; each of its target cases is rerun under several seeds. A bug is
caught by a case whose status is one of the file's `caught_statuses` (fail, error), a legitimate difference
must pass every time; the clean run (no mutant) must pass every case. The random-law figures
(bench/python/random_false_alarm_bench.py) follow when the file embeds them. Rendered only when a file was
given; every value is read defensively (a file from another version of the bench still renders).
"""
import json
import math
from typing import List, Optional

from crossdev.report.merge import Report
from crossdev.report.views.h import Markup, el, fmt_number, join, status_badge, table, td

MAX_JSON_CHARS = 400


def _int(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else 0


def _text(value) -> str:
    return "" if value is None else str(value)


def _rate(k: int, n: int) -> str:
    return f"{k / n:.0%}" if n else "—"


def _badge(text: str, ok: Optional[bool]) -> Markup:
    return el("span", text, class_="badge " + ("st-sk" if ok is None else "st-ok" if ok else "st-bad"))


def _by_status(m: dict) -> str:
    by = m.get("by_status")
    return ", ".join(f"{s} {_int(n)}" for s, n in by.items()) if isinstance(by, dict) else ""


def _targets(m: dict) -> Markup:
    """Each target case with its status per rerun, and the first telling message behind it."""
    statuses = m.get("statuses") if isinstance(m.get("statuses"), dict) else {}
    messages = m.get("messages") if isinstance(m.get("messages"), dict) else {}
    cases = m.get("cases") if isinstance(m.get("cases"), list) else list(statuses)
    lines = []
    for target in cases:
        per_run = statuses.get(target) if isinstance(statuses.get(target), list) else []
        line = [el("code", _text(target)), " ", join((status_badge(_text(s)) for s in per_run), " ")]
        if messages.get(target):
            line.append(el("details", el("summary", "message"), el("pre", _text(messages[target]))))
        lines.append(el("div", *line))
    return join(lines)


def _mutant_row(m: dict, bug: bool) -> list:
    runs = _int(m.get("runs"))
    k = _int(m.get("caught" if bug else "false_alarms"))
    by_status = m.get("by_status") if isinstance(m.get("by_status"), dict) else {}
    if runs == 0 or set(by_status) == {"missing"}:  # its run left no bundle: the section's errors say why
        verdict = _badge("not run", None)
    elif bug:
        verdict = _badge("caught every time", True) if k == runs else _badge(f"missed {runs - k} of {runs}", False)
    else:
        verdict = _badge("no false alarm", True) if k == 0 else _badge(f"{k} false alarm(s)", False)
    return [
        td(el("code", _text(m.get("name"))), data_mutant=_text(m.get("name"))),
        _text(m.get("bug")),
        _text(m.get("rule")),
        td(el("code", _text(m.get("aten")))),
        td(_targets(m)),
        td(f"{k} of {runs}", class_="num", title=_by_status(m)),
        td(_rate(k, runs), class_="num"),
        td(verdict),
    ]


def _mutants(doc: dict) -> List:
    mutants = [m for m in doc.get("mutants", []) if isinstance(m, dict)]
    bugs = [m for m in mutants if m.get("kind") == "bug"]
    legit = [m for m in mutants if m.get("kind") == "legitimate"]
    parts = []
    if bugs:
        every = sum(_int(m.get("runs")) > 0 and _int(m.get("caught")) == _int(m.get("runs")) for m in bugs)
        caught, runs = sum(_int(m.get("caught")) for m in bugs), sum(_int(m.get("runs")) for m in bugs)
        parts.append(el("h3", "Device bugs (must fail)"))
        parts.append(el("p", f"{every} of {len(bugs)} bug mutant(s) caught every time; "
                             f"{caught} of {runs} (target case, rerun) pairs caught ({_rate(caught, runs)}).",
                        class_="ok-note" if every == len(bugs) else "warn"))
        parts.append(table(["mutant", "bug", "rule it is aimed at", "ATen", "target cases (status per rerun)",
                            "caught", "rate", "verdict"], (_mutant_row(m, True) for m in bugs),
                           class_="grid", id="gate-power-bugs"))
    if legit:
        alarms, runs = sum(_int(m.get("false_alarms")) for m in legit), sum(_int(m.get("runs")) for m in legit)
        parts.append(el("h3", "Legitimate device differences (must pass)"))
        parts.append(el("p", f"{alarms} false alarm(s) in {runs} (target case, rerun) pairs.",
                        class_="ok-note" if alarms == 0 else "warn"))
        parts.append(table(["mutant", "difference", "rule that forgives it", "ATen", "target cases (status per rerun)",
                            "false alarms", "rate", "verdict"], (_mutant_row(m, False) for m in legit),
                           class_="grid", id="gate-power-legitimate"))
    other = [m for m in mutants if m.get("kind") not in ("bug", "legitimate")]
    if other:
        parts.append(el("p", f"{len(other)} mutant(s) of an unknown kind left out: "
                             + ", ".join(_text(m.get("name")) for m in other), class_="warn"))
    return parts


def _clean(doc: dict) -> List:
    clean = doc.get("clean")
    if not isinstance(clean, dict):
        return []
    runs, alarms = _int(clean.get("runs")), _int(clean.get("false_alarms"))
    parts = [el("h3", "Clean run: no mutant loaded"),
             el("p", f"{_int(clean.get('cases'))} target case(s), {runs} run(s): {alarms} false alarm(s) ",
                _badge("every case passed", True) if runs and not alarms else
                _badge("not run", None) if not runs else _badge(f"{alarms} false alarm(s)", False),
                id="gate-power-clean")]
    messages = clean.get("messages") if isinstance(clean.get("messages"), dict) else {}
    statuses = clean.get("statuses") if isinstance(clean.get("statuses"), dict) else {}
    if messages:
        def badges(target):
            per_run = statuses.get(target) if isinstance(statuses.get(target), list) else []
            return join((status_badge(_text(s)) for s in per_run), " ")
        parts.append(table(["case", "status per rerun", "first message"],
                           ([el("code", _text(t)), badges(t), _text(msg)] for t, msg in messages.items()),
                           class_="grid", id="gate-power-clean-alarms"))
    return parts


def _scalar(value) -> str:
    if isinstance(value, bool) or value is None:
        return _text(value)
    if isinstance(value, (int, float)):
        return fmt_number(value, 4)
    if isinstance(value, str):
        return value
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= MAX_JSON_CHARS else text[:MAX_JSON_CHARS - 3] + "..."


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _law_ops_table(ops: dict, error) -> Markup:
    """random_false_alarm_bench.py's per-op records: {op: {aten, reruns, false_alarms, false_alarm_rate,
    detection: {parameter: {reruns, detected, rate}}}}: false alarms per case, and the detection of a law off
    by `error` in each parameter, with a badge per op (every error detected, no false alarm)."""
    rows = []
    for name, rec in ops.items():
        runs, alarms = _int(rec.get("reruns")), _int(rec.get("false_alarms"))
        detection = rec.get("detection") if isinstance(rec.get("detection"), dict) else {}
        lines, missed = [], 0
        for parameter, d in detection.items():
            d = d if isinstance(d, dict) else {}
            n, k = _int(d.get("reruns")), _int(d.get("detected"))
            missed += n - k
            lines.append(el("div", el("code", _text(parameter)), f": {k} of {n} ({_rate(k, n)})"))
        aten = rec.get("aten")
        aten = ", ".join(map(_text, aten)) if isinstance(aten, list) else _text(aten)
        if not runs:
            verdict = _badge("not run", None)
        elif alarms == 0 and missed == 0:
            verdict = _badge("no false alarm, every error detected", True)
        else:
            verdict = _badge(f"{alarms} false alarm(s), {missed} miss(es)", False)
        rows.append([_text(name), td(el("code", aten)), td(f"{alarms} of {runs}", class_="num"),
                     td(_rate(alarms, runs), class_="num"), td(join(lines) if lines else "—"), td(verdict)])
    error_text = f"{error:.0%}" if isinstance(error, (int, float)) and not isinstance(error, bool) else "10%"
    header = ["op", "ATen", "false alarms (clean reruns)", "rate", f"a law off by {error_text}: detected", "verdict"]
    return table(header, rows, class_="grid", id="random-laws-ops")


def _random_laws(doc: dict) -> List:
    """bench/python/random_false_alarm_bench.py's JSON: per op, the false alarms per case over clean reruns
    and the detection of a law off by 10% in each parameter (`ops`), then its totals; any other key of another
    version of that file generically (scalars on a line, a table of records as a table, the rest as JSON)."""
    laws = doc.get("random_laws")
    if laws is None:
        return []
    parts = [el("h3", "Random ops by their law"),
             el("p", "bench/python/random_false_alarm_bench.py: each random op's law judged on PyTorch's CPU kernels "
                     "(every failure a false alarm) and with one parameter of the law off (every pass a miss).",
                class_="note")]
    if not isinstance(laws, dict):
        return parts + [el("pre", _scalar(laws))]
    scalars = [(k, v) for k, v in laws.items() if _is_scalar(v)]
    if scalars:
        parts.append(el("p", "; ".join(f"{k}: {_scalar(v)}" for k, v in scalars), id="random-laws-figures"))
    total = laws.get("total")
    if isinstance(total, dict) and "false_alarms" in total:
        runs, alarms = _int(total.get("reruns")), _int(total.get("false_alarms"))
        n, k = _int(total.get("mutant_reruns")), _int(total.get("detected"))
        parts.append(el("p", f"All ops: {alarms} false alarm(s) in {runs} clean case(s) ({_rate(alarms, runs)}); "
                             f"{k} of {n} wrong laws detected ({_rate(k, n)}), worst parameter "
                             f"{_scalar(total.get('worst_detection_rate'))}.", id="random-laws-total"))
    for key, value in laws.items():
        if _is_scalar(value) or (key == "total" and isinstance(value, dict) and "false_alarms" in value):
            continue
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            if key == "ops":
                parts.append(_law_ops_table(value, laws.get("error")))
                continue
            columns: List[str] = []
            for record in value.values():
                columns += [c for c in record if c not in columns]
            parts.append(el("h4", key))
            parts.append(table([key, *columns],
                               ([name, *(td(_scalar(rec.get(c)), class_="num" if isinstance(rec.get(c), (int, float))
                                            else None) for c in columns)] for name, rec in value.items()),
                               class_="grid random-laws"))
        elif isinstance(value, dict):
            parts.append(el("h4", key))
            parts.append(table([key, "value"], ([k, _scalar(v)] for k, v in value.items()), class_="grid random-laws"))
        else:
            parts.append(el("p", el("b", key), ": ", el("code", _scalar(value))))
    return parts


def render(report: Report) -> Optional[Markup]:
    doc, error = report.gate_power, report.gate_power_error
    if doc is None and error is None:
        return None
    parts = []
    if error is not None:
        parts.append(el("p", error.message, class_="warn"))
    if doc is None:
        return join(parts)
    caught_by = doc.get("caught_statuses") if isinstance(doc.get("caught_statuses"), list) else ["fail", "error"]
    diverge, reruns = _text(doc.get("diverge", "all")), _int(doc.get("reruns"))
    parts.append(el(
        "p", "Deliberately wrong ATen kernels (mutants, tests/mutants/aten/catalog.json) loaded into sim under the "
             f"{_text(doc.get('kind', 'cuda'))} profile, {_text(doc.get('dtype', 'float32'))}, at most "
             f"{_text(doc.get('max_samples', '?'))} samples per case, each target case rerun "
             f"{reruns} time(s) under " + ("seed 1" if reruns == 1 else f"seeds 1 to {reruns}") + ", "
             f"CROSSDEV_SIM_DIVERGE={'0' if diverge == 'off' else diverge}. A bug is caught by a case that is "
             f"{' or '.join(map(_text, caught_by))}; a legitimate device difference must pass every time. "
             f"bench/python/gate_power_bench.py, {_scalar(doc.get('seconds')) or '?'} s.", class_="note"))
    errors = doc.get("errors") if isinstance(doc.get("errors"), list) else []
    for message in errors:
        parts.append(el("pre", _text(message), class_="warn"))
    return join([*parts, *_mutants(doc), *_clean(doc), *_random_laws(doc)])
