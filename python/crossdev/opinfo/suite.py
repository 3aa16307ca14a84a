"""The worker's side of `suite: opinfo` rows (docs/opinfo.md): `run` turns one row into its cases, one
per op x device x dtype x check, in a fixed order (the engine resumes after a crash by index); `check`
(row_check.py, torch-free) validates rows against the installed torch's op_db."""
from __future__ import annotations

import time
import zlib

from . import (compile_variant, cpu_capability, cross_machine, expectations, kernel_source, open_contract,
               row_tolerance, samples, seeding, selection)
from .float64_diagnostic import Diagnostic
from .row_check import CHECKS, DTYPE_NAMES, VARIANTS, _op_db_or_fatal, check  # noqa: F401 (check: the worker's)
from .tolerances import tolerance_for
from crossdev.worker_devices import device_for

SEED = 0


def _dtype(name):
    import torch
    return getattr(torch, name)


def case_id(row, name, kind, dtype_name, check, variant="function") -> str:
    """<row>/<op full name>/<kind>/<dtype>/<check>, and /inplace or /out for those forms."""
    suffix = "" if variant == "function" else f"/{variant}"
    return f"{row['id']}/{name}/{kind}/{dtype_name}/{check}{suffix}"


def in_shard(name: str, shard) -> bool:
    """`crossdev run --shard I/N` ([I, N], 1-based): the op goes to shard crc32(name) % N + 1, a hash
    that is the same in every process and on every host, so the N shards split the ops disjointly
    and together run every case of an unsharded run, each op's cases in one shard."""
    index, count = shard
    return count <= 1 or zlib.crc32(name.encode()) % count == index - 1


def plan(op_db, row, shard=(1, 1)) -> list:
    """[(op, full name, device kind, dtype name, check, variant)] in the order the cases run."""
    ops = [op for op in selection.select(op_db, row["opinfo"], row.get("exclude", []))
           if in_shard(selection.full_name(op), shard)]
    return [(op, selection.full_name(op), kind, dtype, check, variant)
            for op in ops for kind in (cpu_capability.case_kinds(row) or row["devices"]) for dtype in row["dtypes"]
            for variant in row.get("variants", ["function"]) for check in row.get("checks", ["forward"])]


def _supported(op, device_type, dtype, check) -> str | None:
    """Why op_db says this case cannot run, or None."""
    def dtypes_for(kind):
        try:
            return (op.supported_backward_dtypes(kind) if check == "backward" else op.supported_dtypes(kind))
        except Exception:  # noqa: BLE001  (an unknown device type: op_db has no list for it)
            return None
    if check == "backward" and not op.supports_autograd:
        return "op_db: no autograd support"
    cpu = dtypes_for("cpu")
    if cpu is not None and dtype not in cpu:
        return f"op_db: {dtype} is not supported on the CPU ({check}): no golden"
    return None


def run_case(op, name, kind, dtype_name, check, variant, request) -> dict:
    import torch

    row = request["row"]
    case = {"id": case_id(row, name, kind, dtype_name, check, variant), "status": "pass", "metrics": {},
            "details": {"op": name, "device_kind": kind, "dtype": dtype_name, "check": check, "variant": variant}}
    device, execution = device_for(kind, request["kinds"].get(kind, "absent"))
    if device is None:
        case.update(status="skip", execution="not_run", message=execution)
        return case
    case.update(device=device, execution=execution)
    skipped = expectations.expected_skip(request, kind, case["id"])
    if skipped:
        case.update(status="skip", execution="not_run", message=skipped)
        return case
    dtype = _dtype(dtype_name)
    why_not = samples.variant_missing(op, variant, check) or _supported(op, kind, dtype, check)
    if why_not:
        case.update(status="skip", execution="not_run", message=why_not)
        return case
    tol = row_tolerance.apply(tolerance_for(op, kind, dtype), row, dtype_name)
    metadata_only = open_contract.metadata_only_reason(op, name)
    case["details"].update(tolerance=f"rtol={tol.rtol:g}, atol={tol.atol:g}", tolerance_source=tol.source)
    if metadata_only:
        case["details"]["compared"] = "shape, dtype and layout only: " + metadata_only
    elif check == "backward" and open_contract.open_ties_reason(name):
        case["details"]["compared"] = "the input's gradient summed over tie groups where the sample leaves " \
            "the choice among ties open (backward): " + open_contract.open_ties_reason(name)
    elif open_contract.open_order_reason(name):
        case["details"]["compared"] = "in canonical order where the sample leaves it open (forward): " + \
            open_contract.open_order_reason(name)
    run_sample = compile_variant.run_sample if variant == "compile" else samples.run_sample
    if variant == "compile":
        case["details"]["golden"] = compile_variant.GOLDEN
    device_type = str(device).split(":")[0]
    seeding.seed(SEED, device_type)
    sample_iter = op.sample_inputs("cpu", dtype, requires_grad=(check == "backward"))
    compared, golden_raised, failing, first = 0, 0, [], None
    worst = samples.Outcome()
    float64 = Diagnostic(op, dtype, check, variant)
    for index, sample in enumerate(sample_iter):
        if index >= row.get("max_samples", 16):
            break
        seeding.seed(SEED + index, device_type)
        try:
            o = run_sample(op, sample, device, check, tol, values=metadata_only is None, variant=variant)
        except samples.GoldenError:
            golden_raised += 1
            continue
        except samples.DeviceError as e:
            case.update(status="error", message=f"sample {index} (shapes {samples.shapes_of(sample)}): {e}")
            return case
        compared += 1
        first = first if first is not None else sample
        for key in ("max_abs", "max_rel", "max_ulp"):
            setattr(worst, key, max(getattr(worst, key), getattr(o, key)))
        if o.mismatch:
            failing.append(f"sample {index} shapes {samples.shapes_of(sample)}: {o.mismatch}{float64.sample(sample, o)}")
    case["metrics"] = {"samples": compared, "failing_samples": len(failing), "max_abs": worst.max_abs,
                       "max_rel": worst.max_rel, "max_ulp": worst.max_ulp}
    if golden_raised:
        case["details"]["golden_raised"] = f"{golden_raised} sample(s) raised on the CPU and were not compared"
    if first is not None and execution == "simulated":
        case["details"].update(kernel_source.for_case(op, first, device, check, variant, dtype_name))
    if compared == 0:
        case.update(status="skip", execution="not_run", message="no sample ran on the CPU golden")
        return case
    if failing:
        float64.record(case)
        case["details"]["failing_samples"] = "\n".join(failing[:10]) + (f"\n... {len(failing) - 10} more" if len(failing) > 10 else "")
        case.update(status="fail", message=f"{len(failing)} of {compared} samples differ from {'eager' if variant == 'compile' else 'the CPU'}; first: {failing[0]}; "
                                           f"tolerance {tol.describe()}")
    return case


def _cases_or_fatal(request, out):
    op_db = _op_db_or_fatal(out)
    if op_db is None:
        return None
    problem = selection.selection_problem(op_db, request["row"].get("opinfo"), request["row"].get("exclude", []))
    if problem:  # never an empty, silently green row (the engine checks first, but not every front end does)
        out.fatal(problem)
        return None
    return plan(op_db, request["row"], request.get("shard", (1, 1)))


def plan_cases(request, out) -> None:
    """The row's cases without running them (the pytest plugin's items)."""
    cases = _cases_or_fatal(request, out)
    if cases is None:
        return
    out.plan(len(cases))
    for index, (_, name, kind, dtype_name, check, variant) in enumerate(cases):
        out.item(index, case_id(request["row"], name, kind, dtype_name, check, variant), kind.split("@")[0])


def run(request, out) -> None:
    cases = _cases_or_fatal(request, out)
    if cases is None:
        return
    out.plan(len(cases))
    seeding.fast_op_db_sampling()  # the same seeds, without torch's and op_db's per-sample costs
    if cpu_capability.KEY in request["row"]:
        cpu_capability.run_row(request, out, cases, SEED, lambda runner, i: _run_one(cases, i, request, out, runner))
        return
    if cross_machine.enabled(request["row"]):  # the same case path, its runner records outputs instead
        cross_machine.run_row(request, out, cases, SEED, lambda runner, i: _run_one(cases, i, request, out, runner))
        return
    for index in range(request.get("start", 0), len(cases)):
        _run_one(cases, index, request, out)


def _run_one(cases, index, request, out, capability_runner=None) -> None:
    """Case `index`: START, then its CASE record (a harness exception is the case's `error`)."""
    op, name, kind, dtype_name, check, variant = cases[index]
    cid = case_id(request["row"], name, kind, dtype_name, check, variant)
    out.start(index, cid)
    started = time.perf_counter()
    try:
        if capability_runner is not None:
            case = capability_case(op, name, kind, dtype_name, check, variant, request, capability_runner)
        else:
            case = run_case(op, name, kind, dtype_name, check, variant, request)
    except Exception as e:  # noqa: BLE001  the harness could not evaluate this case
        case = {"id": cid, "status": "error",
                "execution": "not_run", "message": f"harness: {type(e).__name__}: {e}"}
    case["duration_s"] = time.perf_counter() - started
    out.case(case)


def capability_case(op, name, kind, dtype_name, check, variant, request, runner) -> dict:
    """A case of the CPU-capability axis (kind cpu@<capability>; crossdev.opinfo.cpu_capability)."""
    case = {"id": case_id(request["row"], name, kind, dtype_name, check, variant), "status": "pass", "metrics": {},
            "details": {"op": name, "device_kind": kind, "dtype": dtype_name, "check": check, "variant": variant}}
    skipped = expectations.expected_skip(request, "cpu", case["id"])
    if skipped:
        case.update(status="skip", execution="not_run", message=skipped)
        return case
    dtype = _dtype(dtype_name)
    why_not = _supported(op, "cpu", dtype, check)
    if why_not:
        case.update(status="skip", execution="not_run", message=why_not)
        return case
    return runner.run_case(op, name, kind, dtype_name, check, variant, case)
