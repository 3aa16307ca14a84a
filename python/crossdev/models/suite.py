"""The worker's side of `suite: models` rows (docs/models.md, "Matrix rows"): `check` builds each
row's factory once and validates its dtypes and checks; `run` compares the model on each device
kind x dtype of the row, one case each, in a fixed order (the engine resumes after a crash by index)."""
from __future__ import annotations

import math
import time

from .compare import CHECKS, DEFAULT_CHECKS, DEFAULT_STEPS, DTYPES, compare_on
from crossdev import harness_error, numerics
from crossdev.opinfo import skip_reasons
from crossdev.worker_devices import device_for

from .factory import TRAIN_CONTRACT, FactoryError, build


def missing_packages(row) -> list:
    """The packages of the row's `requires` that this Python cannot import."""
    import importlib.util
    return [name for name in row.get("requires", []) if importlib.util.find_spec(name) is None]


def _missing_text(missing) -> str:
    import sys
    return (f"needs {', '.join(missing)}, not installed in this Python ({sys.executable}): "
            f"pip install 'crossdev[models]' (pyproject.toml pins it)")


def check(request, out) -> None:
    for i, row in enumerate(request["rows"]):
        if missing_packages(row):  # its factory cannot import here: the cases say so (run), the row is valid
            continue
        for key, valid in (("dtypes", DTYPES), ("checks", CHECKS)):
            for value in row.get(key, []):
                if value not in valid:
                    out.bad(i, key, f"unknown {key[:-1]} '{value}'; expected one of {', '.join(valid)}")
        if "numerics" in row and numerics.check_mode(row["numerics"]):  # the modes' one list: numerics.MODES
            out.bad(i, "numerics", numerics.check_mode(row["numerics"]))
        try:
            built = build(row.get("model", ""))
        except FactoryError as e:
            out.bad(i, "model", str(e))
            continue
        if "train" in row.get("checks", []) and (built.loss is None or built.optimizer is None):
            out.bad(i, "checks", f"check 'train' needs model factory '{built.name}' to return a mapping with model, "
                                 f"inputs, loss and optimizer ({TRAIN_CONTRACT})")


def case_id(row, kind, dtype_name) -> str:
    return f"{row['id']}/{kind}/{dtype_name}"


def plan(row) -> list:
    """[(device kind, dtype name)] in the order the cases run."""
    return [(kind, dtype) for kind in row["devices"] for dtype in row["dtypes"]]


def plan_cases(request, out) -> None:
    cases = plan(request["row"])
    out.plan(len(cases))
    for index, (kind, dtype_name) in enumerate(cases):
        out.item(index, case_id(request["row"], kind, dtype_name), kind)


def _layer(point) -> dict:
    """A DepthPoint as the bundle's case.data.layers[] item (docs/bundle-schema.md, "Models data")."""
    number = lambda v: v if math.isfinite(v) else None  # noqa: E731  JSON has no NaN or infinity: null
    return {"module": point.path or "(model)", "call": point.call, "parent": point.parent, "phase": point.phase,
            "inherited": number(point.inherited), "inherited_passed": point.inherited_passed,
            "own": number(point.own), "own_passed": point.own_passed, "limit": number(point.limit)}


def _data(result) -> dict:
    """The case's structured `data`: every module call's error along the depth and, for train, the losses."""
    data = {}
    if result.depth:
        data["layers"] = [_layer(p) for p in result.depth]
    if result.losses:
        data["losses"] = {run: [v if math.isfinite(v) else None for v in values] for run, values in result.losses.items()}
    d = result.first_divergence
    if d is not None:  # which call of the module (a module may be called more than once): the first failing own
        call = next((p.call for p in result.depth if p.phase == d.phase and p.path == d.module and p.own_passed is False),
                    None)
        if call is not None:
            data["first_divergence_call"] = call
    return data


def _case(result, case) -> dict:
    """The engine's case from a DeviceResult."""
    case.update(status=result.status, message=result.message)
    for check, outcome in result.checks.items():
        case["metrics"][f"{check}_compared"] = outcome.compared
        case["metrics"][f"{check}_failing"] = len(outcome.failing)
        case["metrics"][f"{check}_max_abs"] = outcome.max_abs
        case["metrics"][f"{check}_float64_rule_passes"] = outcome.float64_rule_passes
    if result.checks:  # tensors outside the dtype's tolerance passed by the float64 rule, all checks together
        case["metrics"]["float64_rule_passes"] = sum(o.float64_rule_passes for o in result.checks.values())
    if result.numerics:
        case["details"]["numerics"] = result.numerics
    if result.tf32_off_status is not None:
        case["details"]["tf32_off_rerun"] = result.tf32_off_status
    if result.localisation_error:
        case["details"]["localisation_error"] = result.localisation_error
    if result.first_divergence is not None:
        d = result.first_divergence
        case["details"].update(first_divergence=d.module or "(model)", first_divergence_op=d.op or "",
                               first_divergence_phase=d.phase, first_divergence_detail=d.detail)
        if result.status == "fail":  # `crossdev repro`: the first divergent op with the golden's inputs to it
            from crossdev.opinfo import repro_record
            repro_record.record_model_op(case, getattr(d, "repro", None))
    if result.layers:
        case["details"]["error_along_depth"] = result.depth_table()
    data = _data(result)
    if data:
        case["data"] = data
    if result.error:
        case["details"]["exception"] = result.error["text"]
        if result.error["category"]:
            case["details"].update(error_category=result.error["category"], recovery=result.error["recovery_text"])
        if result.error.get("recovered"):  # recover: true (compare.compare_on): what was applied, how the rerun went
            recovered = result.error["recovered"]
            case["details"].update(recovery_applied="; ".join(f"{r['action']} for {r['op']} ({r['calls']} calls)"
                                                              for r in recovered["applied"]) or "nothing",
                                   rerun_status=recovered["rerun_status"])
    return case


def run(request, out) -> None:
    import torch

    from .compare import _Golden, _dtype
    row = request["row"]
    cases = plan(row)
    out.plan(len(cases))
    checks = row.get("checks", list(DEFAULT_CHECKS))
    built, goldens = None, {}
    missing = missing_packages(row)
    for index in range(request.get("start", 0), len(cases)):
        kind, dtype_name = cases[index]
        out.start(index, case_id(row, kind, dtype_name))
        started = time.perf_counter()
        case = {"id": case_id(row, kind, dtype_name), "status": "error", "execution": "not_run", "metrics": {},
                "details": {"model": row["model"], "device_kind": kind, "dtype": dtype_name}}
        try:
            device, execution = device_for(kind, request.get("kinds", {}).get(kind, "absent"))
            if device is None:
                skip_reasons.mark(case, "device_absent").update(status="skip", message=execution)
            elif missing:
                skip_reasons.mark(case, "package_absent").update(status="skip", message=_missing_text(missing))
            else:
                case.update(device=device, execution=execution)
                if built is None:
                    built = build(row["model"])
                if dtype_name not in goldens:
                    goldens[dtype_name] = _Golden(built, _dtype(dtype_name), checks,
                                                  row.get("steps") or built.steps or DEFAULT_STEPS,
                                                  row.get("seed_policy") or built.seed_policy or "none")
                _case(compare_on(torch.device(device), goldens[dtype_name], checks, bool(row.get("recover")),
                                 row.get("numerics", numerics.DEFAULT_MODE), kind), case)
        except FactoryError as e:  # the engine checks rows first; a front end that does not still gets the words
            case.update(status="error", message=str(e))
        except Exception as e:  # noqa: BLE001  the harness could not evaluate this case
            case.update(status="error", message=harness_error.message(e))
        case["duration_s"] = time.perf_counter() - started
        out.case(case)
