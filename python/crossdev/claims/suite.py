"""The worker's side of `suite: claims` rows (docs/xla.md): `check` validates claim names and expected
outcomes (table.py, the one list), `run` observes the claim on each device kind of the row, one case
each, in a fixed order (the engine resumes after a crash by index)."""
from __future__ import annotations

import time

from crossdev import harness_error
from crossdev.worker_devices import device_for

from .table import BY_NAME


def check(request, out) -> None:
    for i, row in enumerate(request["rows"]):
        claim = BY_NAME.get(row.get("claim", ""))
        if claim is None:
            out.bad(i, "claim", f"unknown claim '{row.get('claim', '')}'; expected one of {', '.join(BY_NAME)}")
            continue
        if row.get("expect") not in claim.outcomes:
            out.bad(i, "expect", f"claim '{claim.name}' observes one of {', '.join(claim.outcomes)}; "
                                 f"got '{row.get('expect')}'")


def case_id(row, kind) -> str:
    """`<row>/<kind>`, as the engine plans them (conformance/suites/python_suite.cpp plan, the record's planned_by: device_kinds; no worker is started to plan)."""
    return f"{row['id']}/{kind}"


def run(request, out) -> None:
    import torch

    row = request["row"]
    claim = BY_NAME[row["claim"]]
    kinds = row["devices"]
    out.plan(len(kinds))
    for index in range(request.get("start", 0), len(kinds)):
        kind = kinds[index]
        out.start(index, case_id(row, kind))
        started = time.perf_counter()
        case = {"id": case_id(row, kind), "status": "error", "execution": "not_run", "metrics": {},
                "details": {"claim": claim.name, "observes": claim.observes, "device_kind": kind,
                            "expected": row["expect"]}}
        device, execution = device_for(kind, request.get("kinds", {}).get(kind, "absent"))
        if device is None:
            case.update(status="skip", message=execution)
        elif execution == "simulated":  # a claim is about the device's own runtime; sim's is the CPU's
            case.update(status="skip", message=f"{kind} is simulated here: a claim about {kind}'s runtime is observed "
                                               f"only on a real {kind} (sim runs the CPU's runtime)")
        else:
            case.update(device=device, execution=execution)
            try:
                outcome, details = claim.observe(torch.device(device))
                case["details"].update(actual=outcome, **details)
                if outcome == row["expect"]:
                    case["status"] = "pass"
                else:
                    case.update(status="fail", message=f"{claim.name} on {device}: expected '{row['expect']}', "
                                                       f"observed '{outcome}'" +
                                                       (f" ({details['error']})" if "error" in details else ""))
            except Exception as e:  # noqa: BLE001  the harness could not observe the claim
                case.update(status="error", message=harness_error.message(e)[:500])
        case["duration_s"] = time.perf_counter() - started
        out.case(case)
