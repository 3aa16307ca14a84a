"""Seed 002's redirect-policy table rebuilt from `suite: redirect` cases with ids
"table.<request>.<host>.override-<on|off>" (matrices/redirect_table.yaml).

Rows and columns follow the seed's table; the layout is data, so a new host profile or request
form in the matrix shows up (after the seed's own columns) without code changes.
"""
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from crossdev.report.merge import Report
from crossdev.report.schema import REDIRECT_ACTIONS_BEFORE_3, RENAMED_WORDS_SINCE

REDIRECT_SUITE = "redirect"
_TABLE_ID = re.compile(r"^table\.(?P<request>[^.]+)\.(?P<host>[^.]+)\.override-(?P<override>on|off)$")
_TRACE_STEP = re.compile(r"(?P<request>\S+) -> (?P<result>\S+) \[(?P<action>\w+)")

# The seed's rows: its "Device Specification" column, and the request forms the matrix uses for it.
SEED_ROWS: List[Tuple[str, Tuple[str, ...]]] = [
    ("None / Not Provided", ("none",)),
    ('"cpu" or "cpu:n"', ("cpu", "cpu-n")),
    ('"cpu:-1"', ("cpu-override",)),
    ('"mps" or "mps:n"', ("mps", "mps-0")),
    ('"cuda" or "cuda:n"', ("cuda", "cuda-1")),
]
# The seed's columns first (host profile -> heading), then any other profile the matrix has.
SEED_COLUMNS: List[Tuple[str, str]] = [
    ("mps", "Accelerator MPS"),
    ("cuda", "Accelerator CUDA"),
    ("cuda-x1", "Accelerator CUDA (1 device)"),
    ("cuda-x2", "Accelerator CUDA (2 devices)"),
    ("cpu-only", "CPU-Only"),
]


@dataclass
class Outcome:
    """One (request, host, override) cell entry, as every runner reported it."""
    request: str
    result: str = "?"
    action: str = ""
    statuses: Dict[str, str] = field(default_factory=OrderedDict)  # runner label -> status
    messages: List[str] = field(default_factory=list)
    simulated: bool = False

    @property
    def passed(self) -> bool:
        return all(s == "pass" for s in self.statuses.values())


@dataclass
class RedirectTable:
    rows: List[Tuple[str, Tuple[str, ...]]]
    columns: List[Tuple[str, str]]
    outcomes: Dict[Tuple[str, str, str], Outcome]  # (request form, host, "off"/"on")

    def cell(self, forms: Tuple[str, ...], host: str) -> List[Tuple[str, Outcome]]:
        """[("off", outcome), ("on", outcome)...] for every request form of a seed row."""
        return [(override, self.outcomes[(form, host, override)])
                for form in forms for override in ("off", "on") if (form, host, override) in self.outcomes]


def build_redirect_table(report: Report) -> Optional[RedirectTable]:
    outcomes: Dict[Tuple[str, str, str], Outcome] = {}
    hosts, forms = [], []
    for runner, case in report.cases():
        match = _TABLE_ID.match(case["id"]) if case["suite"] == REDIRECT_SUITE else None
        if not match:
            continue
        form, host, override = match["request"], match["host"], match["override"]
        hosts += [host] if host not in hosts else []
        forms += [form] if form not in forms else []
        steps = list(_TRACE_STEP.finditer(case.get("details", {}).get("trace", "")))
        outcome = outcomes.setdefault((form, host, override), Outcome(request=steps[-1]["request"] if steps else form))
        if steps and outcome.result == "?":
            outcome.result, outcome.action = steps[-1]["result"], steps[-1]["action"]
            if runner.doc["schema_version"] < RENAMED_WORDS_SINCE:  # same action, its older name
                outcome.action = REDIRECT_ACTIONS_BEFORE_3.get(outcome.action, outcome.action)
        outcome.statuses[runner.label] = case["status"]
        outcome.simulated = outcome.simulated or case["execution"] == "simulated"
        if case.get("message"):
            outcome.messages.append(f"{runner.label}: {case['message']}")
    if not outcomes:
        return None
    known_forms = {f for _, fs in SEED_ROWS for f in fs}
    rows = [(label, tuple(f for f in fs if f in forms)) for label, fs in SEED_ROWS]
    rows = [r for r in rows if r[1]] + [(f'"{f}"', (f,)) for f in forms if f not in known_forms]
    known_hosts = [h for h, _ in SEED_COLUMNS]
    columns = [(h, title) for h, title in SEED_COLUMNS if h in hosts] + [(h, h) for h in hosts if h not in known_hosts]
    return RedirectTable(rows=rows, columns=columns, outcomes=outcomes)
