"""The worker's side of `suite: opinfo` rows (docs/opinfo.md): `run` turns one row into its cases, one
per op x device x dtype x check, in a fixed order (the engine resumes after a crash by index); `check`
(row_check.py, torch-free) validates rows against the installed torch's op_db."""
from __future__ import annotations

import contextlib
import json
import os
import time
import zlib
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from crossdev import harness_error, numerics

from . import (compile_variant, cpu_capability, cross_machine, expectations, kernel_source, op_db_decorators,
               open_contract, random_ops, repro_record, row_check, row_tolerance, samples, seeding, selection,
               skip_reasons)
from .float64_diagnostic import Diagnostic
from .row_check import CHECKS, DTYPE_NAMES, VARIANTS, _op_db_or_fatal, check  # noqa: F401 (check: the worker's)
from .tolerances import Tolerance, tolerance_for
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
            for variant in row.get("variants", list(row_check.DEFAULT_VARIANTS))
            for check in row.get("checks", list(row_check.DEFAULT_CHECKS))]


def _supported(op, device_type, dtype, check) -> str | None:
    """Why op_db says this case cannot run on the CPU (no golden), or None."""
    if check == "backward" and not op.supports_autograd:
        return "op_db: no autograd support"
    cpu = _dtypes_for(op, "cpu", check)
    if cpu is not None and dtype not in cpu:
        return f"op_db: {dtype} is not supported on the CPU ({check}): no golden"
    return None


def _dtypes_for(op, kind, check):
    try:
        return op.supported_backward_dtypes(kind) if check == "backward" else op.supported_dtypes(kind)
    except Exception:  # noqa: BLE001  (an unknown device type: op_db has no list for it)
        return None


def declared_gap(op, kind, dtype, check, rules) -> str | None:
    """What op_db declares unsupported on the device kind (its dtypes for the kind, an onlyCPU-style
    decorator): such a case is `skip`, counted as a declared gap, never an `error`. op_db's own tests are
    never instantiated for these (`op.supported_dtypes(device_type)` is empty for histogram on cuda)."""
    if kind == "cpu" or "@" in kind:
        return None
    if rules.declared_gap:
        return rules.declared_gap
    on_kind = _dtypes_for(op, kind, check)
    if on_kind is not None and dtype not in on_kind:
        what = "supported_backward_dtypes" if check == "backward" else "supported_dtypes"
        return f"declared unsupported by op_db: {what}('{kind}') lacks {str(dtype).replace('torch.', '')}"
    return None


def _skip(case, message, **details):
    case.update(status="skip", execution="not_run", message=message)
    case["details"].update(details)
    return case


def run_case(op, name, kind, dtype_name, check, variant, request) -> dict:
    import torch

    row = request["row"]
    case = {"id": case_id(row, name, kind, dtype_name, check, variant), "status": "pass", "metrics": {},
            "details": {"op": name, "device_kind": kind, "dtype": dtype_name, "check": check, "variant": variant}}
    device, execution = device_for(kind, request["kinds"].get(kind, "absent"))
    if device is None:
        case.update(status="skip", execution="not_run", message=execution)
        return skip_reasons.mark(case, "device_absent")
    case.update(device=device, execution=execution)
    skipped = expectations.expected_skip(request, kind, case["id"])
    if skipped:
        case.update(status="skip", execution="not_run", message=skipped)
        return skip_reasons.mark(case, "expectation")
    dtype = _dtype(dtype_name)
    missing = samples.variant_missing(op, variant, check)
    if missing:
        return skip_reasons.mark(_skip(case, missing), "variant_missing")
    why_not = _supported(op, kind, dtype, check)
    if why_not:
        return skip_reasons.mark(_skip(case, why_not), "no_golden")
    rules = op_db_decorators.rules_for(op, kind, dtype, check)
    if rules.describe():
        case["details"]["op_db_decorators"] = rules.describe()
    if rules.ignored:
        case["details"]["op_db_ignored"] = ", ".join(dict.fromkeys(rules.ignored)) + \
            f" (decorators crossdev does not apply to {'.'.join(rules.test)})"
    gap = declared_gap(op, kind, dtype, check, rules)
    if gap:
        return skip_reasons.mark(_skip(case, gap, declared_gap=gap), "declared_gap")
    if rules.skip:
        return skip_reasons.mark(_skip(case, rules.skip), "op_db_skip")
    tol = row_tolerance.apply(tolerance_for(op, kind, dtype, rules), row, dtype_name)
    mode = row.get("numerics", numerics.DEFAULT_MODE)
    deployed = numerics.settings()
    if kind in numerics.TF32_KINDS:
        case["details"]["numerics"] = numerics.record(mode, kind, deployed) + \
            (f"; TF32 off for this op: {rules.tf32_off}" if rules.tf32_off and mode == "deployed" else "")
    context = numerics.tf32_off if (rules.tf32_off and kind in numerics.TF32_KINDS) else \
        (lambda: numerics.case_context(mode, kind))
    tf32_deployed = mode == "deployed" and kind in numerics.TF32_KINDS and numerics.tf32_on(deployed) and not rules.tf32_off
    metadata_only = open_contract.metadata_only_reason(op, name)
    case["details"].update(tolerance=f"rtol={tol.rtol:g}, atol={tol.atol:g}", tolerance_source=tol.source)
    if metadata_only:
        case["details"]["compared"] = "shape, dtype and layout only: " + metadata_only
    elif check == "backward" and open_contract.open_ties_reason(name):
        case["details"]["compared"] = "the input's gradient summed over tie groups where the sample leaves " \
            "the choice among ties open (backward): " + open_contract.open_ties_reason(name)
    elif open_contract.open_signs_reason(name):
        case["details"]["compared"] = "in sign-canonical form, forward and backward: " + open_contract.open_signs_reason(name)
    elif open_contract.open_order_reason(name):
        case["details"]["compared"] = "in canonical order where the sample leaves it open (forward): " + \
            open_contract.open_order_reason(name)
    run_sample = compile_variant.run_sample if variant == "compile" else samples.run_sample
    if variant == "compile":
        case["details"]["golden"] = compile_variant.GOLDEN
    device_type = str(device).split(":")[0]
    tf32_tol = None
    if tf32_deployed and variant != "compile" and not tol.source.startswith("row "):
        tf32_tol = Tolerance(tol.rtol, max(tol.atol, numerics.TF32_ATOL), numerics.TF32_SOURCE)
        case["details"]["tolerance_tf32"] = f"{tf32_tol.describe()}, for the samples that reach a TF32 op"
    with context(), _lowering(device_type, execution) as lowering:
        result = _run_samples(op, case, row, device, device_type, dtype, check, variant, tol, metadata_only,
                              run_sample, tf32_tol)
    if lowering is not None:  # a real xla device: lowered to XLA, or torch_xla's CPU fallback (xla_lowering.py)
        case["details"].update(lowering.details())
        case["metrics"].update(lowering.metrics())
    found = result
    if found.first is not None and execution == "simulated":
        case["details"].update(kernel_source.for_case(op, found.first, device, check, variant, dtype_name))
    if found.compared == 0 and not found.errors:
        why = "no sample ran on the CPU golden" if found.golden_raised and not found.empty else \
            f"no sample had elements ({found.empty} empty sample(s) ran, none compared anything)"
        case.update(status="skip", execution="not_run", message=why)
        return skip_reasons.mark(case, "golden_raised" if found.golden_raised and not found.empty else "no_elements")
    randomness = ""
    if found.random_calls or found.random_sample is not None:
        with context():
            randomness = _randomness(op, case, found, device, device_type, check, variant, tol)
    found.float64.record(case)
    if found.errors:
        case["details"]["error_samples"] = "\n".join(found.errors[:10])
    if found.failing:
        failing = found.failing
        case["details"]["failing_samples"] = "\n".join(failing[:10]) + (f"\n... {len(failing) - 10} more" if len(failing) > 10 else "")
        message = f"{len(failing)} of {found.compared} samples differ from {'eager' if variant == 'compile' else 'the CPU'}; " \
                  f"first: {failing[0]}; tolerance {tol.describe()}"
        if tf32_deployed:
            message += "; " + _tf32_rerun(op, case, row, device, device_type, dtype, check, variant, run_sample, tol)
        if lowering is not None:
            message += "; " + _reverse_order_rerun(op, case, row, device, device_type, dtype, check, variant, tol,
                                                   metadata_only, run_sample, failing)
        case.update(status="fail", message=message)
    elif randomness:
        case.update(status="fail", message=f"random op: {randomness}")
    elif found.errors:
        case.update(status="error", message=f"{found.errors[0]}" + (
            f" ({len(found.errors) - 1} more sample(s) raised)" if len(found.errors) > 1 else "") +
            f"; the {found.compared} other sample(s) compared agree")
    if found.errors and case["status"] == "fail":
        case["message"] += f"; also {len(found.errors)} sample(s) raised on the device, first: {found.errors[0]}"
    return xfail_verdict(case, rules)


def explaining_rule(case) -> str:
    """The rule of crossdev's own that handles what PyTorch's comparison cannot for this case, or '': such a
    case is judged by that rule, and op_db's expectedFailure for the reference test does not apply to it."""
    details = case["details"]
    if details.get("open_outputs"):
        return f"open outputs (open_contract.OPEN_OUTPUTS): {details['open_outputs']}"
    if details.get("random_ops"):
        return "random ops judged by their law (random_laws.py)"
    compared = details.get("compared", "")
    if compared.startswith(("in canonical order", "in sign-canonical form", "the input's gradient summed")):
        return compared
    return ""


def xfail_verdict(case, rules):
    """op_db's expectedFailure for the case's reference test, applied as PyTorch applies it: a failure is
    `xfail`, a pass is `xpass` (an unexpected success) and gates; unless one of crossdev's own rules explains
    what PyTorch's comparison cannot (explaining_rule): then the decorator is not taken, a failure fails and a
    pass says which rule passed it. On sim (the CPU's kernels), a pass is a pass that says so: the decorator is
    about the real device's kernels, which did not run; so on a real kind PyTorch's CI never runs the test on
    (op_db_decorators.REFERENCE_CI_KINDS)."""
    if not rules.xfail or case["status"] not in ("pass", "fail"):
        return case
    decorator = f"op_db expects {'.'.join(rules.test)} to fail here ({rules.xfail})"
    rule = explaining_rule(case) or (case["status"] == "pass" and case["details"].get("float64_rule", ""))
    if rule:
        case["details"]["op_db_xfail_not_taken"] = f"{decorator}; not taken: crossdev judges it by {rule}"
        return case
    if case["status"] == "fail":
        case.update(status="xfail", message=f"{decorator}: {case['message']}")
    elif case.get("execution") == "simulated":  # sim runs the CPU's kernels: its agreement says nothing of the device's
        case["details"]["op_db_xfail_simulated"] = (
            f"{decorator}: on a real {case['details']['device_kind']}; sim runs the CPU's kernels, so it agrees here. "
            "Not an unexpected success: a real device's run decides it (xpass there)")
    elif case["details"]["device_kind"] not in op_db_decorators.REFERENCE_CI_KINDS:
        case["details"]["op_db_xfail_passes"] = (
            f"{decorator}, evidence from PyTorch's CI on {', '.join(op_db_decorators.REFERENCE_CI_KINDS)}; on this "
            f"{case['details']['device_kind']} every sample agrees (PyTorch does not run the test here: not an "
            "unexpected success)")
    else:
        case.update(status="xpass", message=f"{decorator}, and every sample agrees: an unexpected success (remove "
                                            "the decorator upstream, or explain the difference with a rule)")
    return case


def _lowering(device_type, execution):
    """A Recorder of torch_xla's counters around a case on a real xla device; a no-op context elsewhere."""
    if device_type == "xla" and execution == "real":
        from crossdev import xla_lowering
        return xla_lowering.Recorder()
    return contextlib.nullcontext()


# Kinds whose reference test makes its samples on the CPU and moves them to the device: test_mps.py's
# TestConsistency (`op.sample_inputs("cpu", ...)`, then `.to("mps")`); every other kind's, test_compare_cpu,
# makes them on the device.
SAMPLES_MADE_ON_CPU = ("mps",)


def _sample_iter(op, device, dtype, check, variant, kind=""):
    """op_db's samples, where the kind's reference test makes them: on the device under test as test_compare_cpu
    does (the golden runs their CPU copy), on the CPU for mps as TestConsistency does, and on the CPU for a compile
    case (it compares eager and compiled on the device)."""
    where = "cpu" if variant == "compile" or kind in SAMPLES_MADE_ON_CPU else device
    return op.sample_inputs(where, dtype, requires_grad=(check == "backward"))


@dataclass
class Samples:
    """What the samples of a case found: `compared` counts the samples with elements (an empty sample compares
    nothing and does not count), `failing` a line per sample outside every rule, `errors` a line per sample the
    device raised on or could not make (the other samples' verdicts stand beside them)."""
    compared: int = 0
    empty: int = 0
    golden_raised: int = 0
    failing: list = dataclass_field(default_factory=list)
    errors: list = dataclass_field(default_factory=list)
    first: object = None  # the first compared CPU sample
    random_sample: object = None  # the sample the two-sample fallback draws from (random ops without a law)
    random_calls: list = dataclass_field(default_factory=list)  # the device's random ATen calls (random_laws)
    float64: object = None
    updated_inputs: int = 0


def seed_of(row) -> int:
    """The row's `seed` (a rerun under another seed), else SEED."""
    return int(row.get("seed", SEED))


def _run_samples(op, case, row, device, device_type, dtype, check, variant, tol, metadata_only, run_sample, tf32_tol):
    """Every sample of the case, until max_samples of them had elements: a Samples."""
    seed = seed_of(row)
    seeding.seed(seed, device_type)
    sample_iter = _sample_iter(op, device, dtype, check, variant, case["details"]["device_kind"])
    found = Samples(float64=Diagnostic(op, dtype, check, variant, tol))
    random_ops_seen = []
    worst = samples.Outcome()
    wanted = row_check.max_samples(row)
    ran = []  # (index, the CPU sample before the calls) of the samples the device ran: `crossdev repro` replays them
    for index, sample in enumerate(_made_on_device(sample_iter, found.errors, device)):
        if found.compared >= wanted:
            break
        if _crash_record.path:
            _crash_record.write(op, case, index, sample, variant, check, tol, seed + index, ran)
        seeding.seed(seed + index, device_type)
        try:
            extra = {"tf32_tol": tf32_tol} if tf32_tol is not None else {}
            o = run_sample(op, sample, device, check, tol, values=metadata_only is None, variant=variant, **extra)
        except samples.GoldenError:
            found.golden_raised += 1
            continue
        except samples.DeviceError as e:
            found.errors.append(f"sample {index} (shapes {samples.shapes_of(sample)}): {e}")
            if not found.failing:  # `crossdev repro`: the call alone, on the sample the device raised on
                _record_repro(op, case, index, sample, variant, check, tol, [], seed + index, "raised", ran)
            continue
        pristine = getattr(o, "pristine_sample", None)
        if not o.elements and not o.mismatch:
            found.empty += 1
            ran.append((index, pristine))
            continue
        found.compared += 1
        found.updated_inputs += o.updated_inputs
        golden_sample = getattr(o, "golden_sample", None) or sample
        found.first = found.first if found.first is not None else golden_sample
        for key in ("max_abs", "max_rel", "max_ulp"):
            setattr(worst, key, max(getattr(worst, key), getattr(o, key)))
        if samples.process_fn_name(sample) and "output_process_fn_grad" not in case["details"]:
            case["details"]["output_process_fn_grad"] = f"applied to both results (op_db: {samples.process_fn_name(sample)})"
        if getattr(o, "open_outputs", ""):
            case["details"]["open_outputs"] = o.open_outputs
        if getattr(o, "random_ops", None):
            random_ops_seen += [n for n in o.random_ops if n not in random_ops_seen]
            found.random_calls += getattr(o, "random_calls", [])
            if found.random_sample is None or _numel(sample) < _numel(found.random_sample):  # the cheapest with elements
                found.random_sample = sample
        if o.mismatch:
            text, passes = found.float64.judge(golden_sample, o) if metadata_only is None and not o.random_ops else ("", False)
            if not passes:
                found.failing.append(f"sample {index} shapes {samples.shapes_of(sample)}: {o.mismatch}{text}")
                if len(found.failing) == 1:  # `crossdev repro` (repro_record.py): the first failing sample
                    case["details"].pop("repro_sample", None)
                    case["details"].pop("repro_sample_file", None)
                    case["details"].pop("repro", None)
                    case["details"].pop("reproduce", None)
                    used = tf32_tol if (tf32_tol is not None and o.tf32_ops) else tol
                    _record_repro(op, case, index, pristine or golden_sample, variant, check, used,
                                  o.kept.grad_outputs if o.kept is not None else [], seed + index, "mismatch", ran)
        ran.append((index, pristine))
    case["metrics"] = {"samples": found.compared, "failing_samples": len(found.failing), "max_abs": worst.max_abs,
                       "max_rel": worst.max_rel, "max_ulp": worst.max_ulp}
    if found.empty:
        case["metrics"]["empty_samples"] = found.empty
        case["details"]["empty_samples"] = f"{found.empty} sample(s) without elements ran and were not counted as compared"
    if found.errors:
        case["metrics"]["error_samples"] = len(found.errors)
    if found.updated_inputs:
        case["details"]["updated_inputs"] = (f"{found.updated_inputs} input(s) the op updates in place compared after "
                                             "the call (running statistics, buffers)")
    if found.golden_raised:
        case["details"]["golden_raised"] = f"{found.golden_raised} sample(s) raised on the CPU and were not compared"
    if random_ops_seen:
        case["details"]["random_ops"] = ", ".join(f"aten::{n}" for n in random_ops_seen)
        case["details"]["compared"] = (f"random op (it reached {case['details']['random_ops']}, tagged "
                                       "nondeterministic_seeded): the samples that drew compared on shape, dtype and "
                                       "layout, and by the law of each random ATen call (random_laws.py)")
    return found


def _record_repro(op, case, index, sample, variant, check, tol, grad_outputs, seed, kind="mismatch", ran=()) -> None:
    """The sample `crossdev repro` rebuilds the case from (repro_record.py), its tensors on the CPU, after the
    samples the device ran before it in this case (`ran`: (index, CPU sample); their seeds follow `seed`'s rule)."""
    try:
        cpu_sample = sample if samples._on_cpu(sample) else samples.on_cpu(op, sample)
    except Exception as e:  # noqa: BLE001  (a device that cannot copy its own sample back)
        case["details"]["repro"] = f"no standalone script: the sample could not be copied to the CPU ({type(e).__name__})"
        return
    before = [(i, seed - index + i, s) for i, s in ran if s is not None]
    repro_record.record(op, case, index, cpu_sample, variant, check, tol, grad_outputs, seed, kind, before)


def _made_on_device(sample_iter, errors, device):
    """op_db's samples as the case's reference test makes them, on the device (test_compare_cpu): op_db's
    generators run ops there (make_fullrank_matrices_with_distinct_singular_values runs svd and qr). A sample
    the device cannot make is the device's error, recorded in `errors` beside the verdicts of the samples
    already compared (a generator that raised is finished: the samples after it are not made); on a lazy
    device the sample is read first, where such an error surfaces (samples.materialize)."""
    index = 0
    while True:
        try:
            sample = next(sample_iter)
            samples.materialize((sample.input, sample.args, sample.kwargs), device)
        except StopIteration:
            return
        except Exception as e:  # noqa: BLE001  the device's error while making sample `index`
            text = str(e).strip().splitlines()[0] if str(e).strip() else ""
            errors.append(f"making sample {index} on the device (op_db's sample_inputs): {type(e).__name__}: {text}")
            return
        yield sample
        index += 1


def _numel(sample) -> int:
    from torch.utils._pytree import tree_flatten
    import torch
    return sum(t.numel() for t in tree_flatten((sample.input, sample.args, sample.kwargs))[0] if isinstance(t, torch.Tensor))


def _randomness(op, case, found, device, device_type, check, variant, tol) -> str:
    """A random case's draws judged: each random ATen call the device made, by its law (random_laws.judge_case:
    enlarged draws, goodness of fit, the support, a repeated draw), and, where a call has no law, the two-sample
    test against the CPU on a sample with elements (random_ops.py). '' when every test agrees."""
    from . import random_laws

    # the laws of the draws are the forward case's to judge (the same calls): a backward case judges its gradients
    # against its own draw (random_backward.py), and only calls without a law by the two-sample test
    verdicts = random_laws.judge_case(found.random_calls, device, rtol=tol.rtol, atol=tol.atol) \
        if check == "forward" else []
    judged = [v for v in verdicts if v.kind == "law"]
    lawless = sorted({f"aten::{c.name}" for c in found.random_calls if random_laws.law_for(c) is None})
    lines = [v.text for v in verdicts]
    failed = next((v.text for v in verdicts if not v.passed), "")
    if judged:
        case["metrics"]["law_values"] = sum(v.values for v in judged)
    fallback = ""
    if (lawless or not found.random_calls) and found.random_sample is not None and not failed:
        fallback = _distribution(op, case, found.random_sample, device, device_type, check, variant, tol)
        lines.append(f"{', '.join(lawless) or 'the device reached no random ATen op'}: no law; "
                     f"{case['details'].pop('distribution', '')}")
    case["details"]["distribution"] = "\n".join(lines)
    return failed or fallback


def _distribution(op, case, sample, device, device_type, check, variant, tol) -> str:
    """The two-sample test of a random case without a law, on a sample with elements: '' when it agrees."""
    cpu_sample = sample if samples._on_cpu(sample) else samples.on_cpu(op, sample)
    sample = samples._to_device(sample, device) if samples._on_cpu(sample) else sample
    grad_outputs = []
    try:
        cpu = random_ops.draw_features(lambda: samples.draw(op, cpu_sample, "cpu", check, variant, grad_outputs),
                                       lambda s: seeding.seed(s))
        dev = random_ops.draw_features(lambda: samples.draw(op, sample, device, check, variant, grad_outputs),
                                       lambda s: seeding.seed(s, device_type))
    except Exception as e:  # noqa: BLE001  (a draw that raises: the samples above already ran, say so)
        case["details"]["distribution"] = f"not tested: a draw raised {type(e).__name__}: {str(e)[:200]}"
        return ""
    verdict = random_ops.compare_distributions(dev, cpu, tol.rtol, tol.atol)
    case["details"]["distribution"] = verdict or (
        f"{random_ops.DRAWS} draws on each side agree in distribution ({', '.join(random_ops.FEATURES)}; "
        f"KS at {random_ops.ALPHA:g} per case)")
    case["metrics"]["distribution_draws"] = random_ops.DRAWS
    return verdict


def _reverse_order_rerun(op, case, row, device, device_type, dtype, check, variant, tol, metadata_only, run_sample,
                         failing) -> str:
    """A failing case on a lazy device (xla), its samples run again in reverse order: a sample whose result
    depends on the graphs compiled before it (torch_xla reusing a cached graph for another argument, as
    pixel_shuffle's upscale factor) may fail in one order only. The graphs compiled in op_db's order are still
    cached, so the same failures in both orders do not clear the order: the repro script's --alone does (it
    runs in a fresh process). Either way the case stays failed."""
    failed_forward = {int(line.split()[1]) for line in failing}
    items = []
    for index, sample in enumerate(_sample_iter(op, device, dtype, check, variant, case["details"]["device_kind"])):
        if index >= row_check.max_samples(row):
            break
        items.append((index, sample))
    failed_reversed = set()
    for index, sample in reversed(items):
        seeding.seed(seed_of(row) + index, device_type)
        try:
            o = run_sample(op, sample, device, check, tol, values=metadata_only is None, variant=variant)
        except (samples.GoldenError, samples.DeviceError):
            continue
        if o.mismatch:
            failed_reversed.add(index)
    if failed_reversed == failed_forward:
        verdict = ("the same samples fail in reverse order (the graphs the first order compiled stay cached in this "
                   "process, so this does not rule out a graph-cache bug: `crossdev repro`'s script with and without "
                   "--alone does)")
    else:
        only_forward = sorted(failed_forward - failed_reversed)
        only_reverse = sorted(failed_reversed - failed_forward)
        verdict = ("order-dependent (a graph-cache bug: a sample's result depends on the graphs compiled before it): "
                   f"samples {only_forward or '-'} fail in order only, {only_reverse or '-'} in reverse order only")
    case["details"]["sample_order"] = verdict
    return verdict


def _tf32_rerun(op, case, row, device, device_type, dtype, check, variant, run_sample, tol) -> str:
    """A case that failed under the deployed TF32 switches, run again with TF32 off: which mode fails."""
    seen = numerics.OpsSeen()
    rerun = dict(case, details=dict(case["details"]), metrics={})
    with numerics.tf32_off():
        result = _run_samples(op, rerun, row, device, device_type, dtype, check, variant, tol, None, run_sample, None)
    with seen:  # the ATen ops the device run reaches (for the message): one sample once more
        try:
            first = next(iter(_sample_iter(op, device, dtype, check, variant, case["details"]["device_kind"])))
            samples._call(op, samples._to_device(first, device))
        except Exception:  # noqa: BLE001
            pass
    passes_without = not result.failing and not result.errors
    verdict = numerics.tf32_verdict(seen.tf32_ops(), passes_without)
    case["details"]["tf32"] = verdict
    return verdict


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
    if request.get("crash_record"):  # the engine's rerun of a case that crashed: that case alone, each sample
        _crash_record.path = request["crash_record"]  # written before its call (crossdev repro's crash script)
        try:
            _run_one(cases, request["start"], request, out)
        finally:
            _crash_record.path = None
        return
    for index in range(request.get("start", 0), len(cases)):
        _run_one(cases, index, request, out)


class _crash_record:
    """Where the rerun of a crashed case writes each sample's record before the device runs it: the last one
    written is the sample the process died on. The file holds {"details": {...}}, the details a failing case
    gets from repro_record (the sample, or why there is none), which the engine adds to the crash case."""
    path = None

    @classmethod
    def write(cls, op, case, index, sample, variant, check, tol, seed, ran) -> None:
        scratch = {"id": case["id"], "details": dict(case["details"])}
        _record_repro(op, scratch, index, sample, variant, check, tol, [], seed, "crashed", ran)
        keys = ("repro_sample", "repro_sample_file", "reproduce", "repro")
        doc = {"details": {k: scratch["details"][k] for k in keys if k in scratch["details"]}}
        tmp = cls.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f)
        os.replace(tmp, cls.path)


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
                "execution": "not_run", "message": harness_error.message(e)}
    case["duration_s"] = time.perf_counter() - started
    out.case(case)


def capability_case(op, name, kind, dtype_name, check, variant, request, runner) -> dict:
    """A case of the CPU-capability axis (kind cpu@<capability>; crossdev.opinfo.cpu_capability)."""
    case = {"id": case_id(request["row"], name, kind, dtype_name, check, variant), "status": "pass", "metrics": {},
            "details": {"op": name, "device_kind": kind, "dtype": dtype_name, "check": check, "variant": variant}}
    skipped = expectations.expected_skip(request, "cpu", case["id"])
    if skipped:
        case.update(status="skip", execution="not_run", message=skipped)
        return skip_reasons.mark(case, "expectation")
    dtype = _dtype(dtype_name)
    why_not = _supported(op, "cpu", dtype, check)
    if why_not:
        case.update(status="skip", execution="not_run", message=why_not)
        return skip_reasons.mark(case, "no_golden")
    return runner.run_case(op, name, kind, dtype_name, check, variant, case)
