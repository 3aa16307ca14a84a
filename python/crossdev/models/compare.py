"""compare_model: build on the CPU, copy to each device, compare forward outputs and every
parameter's gradient with the CPU golden (and a float64 CPU run bounding the expected error), and
localise the culprit when a comparison fails (docs/models.md)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from crossdev import dtypes, float64_rule, numerics, python_suites

from . import depth, errors, localise, randomness
from .capture import CallRecorder
from .factory import TRAIN_CONTRACT, FactoryError, build
from .ops import OpRecorder, random_ops
from .placement import KEEPS_PARAMETERS, broken_ties, convert, model_copy
from .recovery import OpRecovery, applicable
from .result import CheckOutcome, DeviceResult, ModelComparison
from .tolerance import judge, judge_all

# The models rows' checks and defaults: the suite's record in python_suites.json (the engine's too).
CHECKS = python_suites.choices("models", "checks")
DEFAULT_CHECKS = python_suites.default("models", "checks")
DEFAULT_STEPS = python_suites.default("models", "steps")
DTYPES = dtypes.FLOATING_NAMES  # crossdev/dtypes.json's floating ones
GRAD_OUTPUT_SEED = 0


@dataclass
class Run:
    outputs: object
    grads: dict  # parameter name -> gradient on the CPU, or None
    calls: list  # capture.ModuleCall per module call
    random: list  # names of random ops the forward ran (golden only)
    grad_outputs: list | None  # what the backward started from


@dataclass
class Models:
    golden: object  # CPU, the dtype under test
    device: object  # the device, the dtype under test
    reference: object  # CPU, float64
    random_at: object = None  # call -> the seed policy's context to re-run that call alone (localise)


def _grad_outputs(outputs, dtype):
    """Fixed random gradients for each output that requires grad (not ones: a sum would hide
    errors that cancel), generated in float64 and rounded to the dtype, the same on every device."""
    import torch
    from torch.utils._pytree import tree_flatten
    generator = torch.Generator().manual_seed(GRAD_OUTPUT_SEED)
    return [(torch.rand(t.shape, generator=generator, dtype=torch.float64) * 2 - 1).to(dtype)
            if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point() else None
            for t in tree_flatten(outputs)[0]]


def run_model(model, inputs, grad_outputs=None, keep_inputs=False, keep_grads=False, watch_random=False,
              seed_policy="none"):
    """One forward (module calls recorded), and a backward with grad_outputs when given (a list, one
    per flattened output, or a callable making it from the outputs); random draws as the seed
    policy says (randomness.py)."""
    import contextlib

    import torch
    from torch.utils._pytree import tree_flatten
    model.zero_grad(set_to_none=True)
    recorder = OpRecorder(keep_outputs=False) if watch_random else contextlib.nullcontext()
    masks = randomness.masks(seed_policy)
    with masks, CallRecorder(model, keep_inputs=keep_inputs, keep_grads=keep_grads,
                             draws=lambda: randomness.position(masks)) as calls, recorder:
        outputs = model(*inputs)
    if callable(grad_outputs):
        grad_outputs = grad_outputs(outputs)
    pairs = [(o, g) for o, g in zip(tree_flatten(outputs)[0], grad_outputs or []) if g is not None]
    if pairs:
        torch.autograd.backward([o for o, _ in pairs], [g.to(device=o.device, dtype=o.dtype) for o, g in pairs])
    grads = {name: (p.grad.detach().cpu() if p.grad is not None else None) for name, p in model.named_parameters()}
    return Run(outputs, grads, calls, random_ops(recorder.ops) if watch_random else [], grad_outputs)


@dataclass
class Training:
    losses: object  # tensor of steps + 1 losses (CPU)
    grads: list  # per step, parameter name -> the gradient the step took (CPU; recorded on the golden only)


def train_run(model, inputs, built, steps, seed_policy="none", record_grads=False) -> Training:
    """The loss before each of `steps` optimizer steps and after the last: steps + 1 values on the
    CPU; with record_grads, the gradients each step took (the golden's, for optimizer_run)."""
    import torch
    optimizer = built.optimizer(model.parameters())
    losses, grads = [], []
    with randomness.masks(seed_policy):  # the k-th draw of the whole run: the same on every device
        for step in range(steps + 1):
            optimizer.zero_grad(set_to_none=True)
            loss = built.loss(model(*inputs), *inputs)
            losses.append(loss.detach().reshape(()).cpu())
            if step < steps:
                loss.backward()
                if record_grads:
                    grads.append({name: p.grad.detach().to("cpu", copy=True) if p.grad is not None else None
                                  for name, p in model.named_parameters()})
                optimizer.step()
    return Training(torch.stack(losses), grads)


def optimizer_run(model, built, grads) -> list:
    """The optimizer's steps alone, each from given gradients (the CPU golden's, one mapping per
    step) instead of the model's own: the parameters after each step, on the CPU. On a device this
    is the optimizer step's own error, apart from the error its gradients inherit from the
    device's forward and backward (docs/models.md, "The train check")."""
    named = dict(model.named_parameters())
    optimizer = built.optimizer(model.parameters())
    after = []
    for step_grads in grads:
        for name, p in named.items():
            g = step_grads.get(name)
            p.grad = None if g is None else g.to(device=p.device, dtype=p.dtype)
        optimizer.step()
        after.append({name: p.detach().to("cpu", copy=True) for name, p in named.items()})
    return after


def _optimizer_outcome(actual, golden, reference):
    """Every parameter after every step, stepped from the golden gradients."""
    judgements, names = [], []
    for step, (a, g, r) in enumerate(zip(actual, golden, reference), start=1):
        for name in g:
            names.append(f"{name} after step {step}")
            judgements.append((len(names) - 1, judge(a[name], g[name], r.get(name))))
    return _outcome("optimizer_step", judgements, names)


def _train_outcome(actual, golden, reference):
    """Each step's loss judged alone: the float64 rule bounds it by the CPU's own error at that step,
    which the optimizer amplifies as it amplifies the device's (docs/models.md, "The train check")."""
    actual, golden, reference = actual.losses, golden.losses, reference.losses
    judgements = [(i, judge(actual[i:i + 1], golden[i:i + 1], reference[i:i + 1])) for i in range(len(golden))]
    return _outcome("train", judgements, [f"loss after step {i}" for i in range(len(golden))])


def _outcome(check, judgements, names):
    failing = [names[i] for i, j in judgements if not j.passed]
    first = next((j for _, j in judgements if not j.passed), None)
    largest = max((j.max_abs for _, j in judgements), default=0.0)
    by_rule = [(names[i], j) for i, j in judgements if j.passed and j.by_float64_rule]
    first_by_rule = f"{by_rule[0][0]}: {float64_rule.explain(by_rule[0][1].device_vs_float64, by_rule[0][1].golden_vs_float64)}" \
        if by_rule else ""
    return CheckOutcome(check, not failing, len(judgements), failing,
                        (first.describe() if first else ""), largest, len(by_rule), first_by_rule)


def _forward_outcome(actual, golden, reference):
    from torch.utils._pytree import tree_flatten
    n = len(tree_flatten(golden.outputs)[0])
    return _outcome("forward", judge_all(actual.outputs, golden.outputs, reference.outputs),
                    [f"output[{i}]" for i in range(n)])


def _backward_outcome(actual, golden, reference):
    from .tolerance import Judgement
    judgements, names = [], []
    for name, g in golden.grads.items():
        a = actual.grads.get(name)
        if g is None and a is None:
            continue
        names.append(name)
        if (g is None) != (a is None):
            judgements.append((len(names) - 1, Judgement(False, float("inf"), float("inf"), float("inf"),
                                                          float("nan"), float("nan"), "a gradient on one side only")))
        else:
            judgements.append((len(names) - 1, judge(a, g, reference.grads.get(name))))
    return _outcome("backward", judgements, names)


class _Golden:
    """The CPU golden in one dtype, and the float64 reference, for every device to be compared with."""

    def __init__(self, built, dtype, checks, steps=DEFAULT_STEPS, seed_policy="none"):
        import torch
        self.built, self.dtype, self.steps, self.seed_policy = built, dtype, steps, seed_policy
        self.model = model_copy(built.model, "cpu", dtype)
        self.reference_model = model_copy(built.model, "cpu", torch.float64)
        inputs = convert(built.inputs, "cpu", dtype)
        self.error = None
        try:
            backward = "backward" in checks
            self.run = run_model(self.model, inputs, (lambda out: _grad_outputs(out, dtype)) if backward else None,
                                 keep_inputs=True, keep_grads=backward, watch_random=True, seed_policy=seed_policy)
            self.grad_outputs = self.run.grad_outputs
            reference_grads = [g.double() if g is not None else None for g in self.grad_outputs or []]
            self.reference = run_model(self.reference_model, convert(built.inputs, "cpu", torch.float64),
                                       reference_grads or None, keep_grads=backward, seed_policy=seed_policy)
            if "train" in checks:
                golden_model = model_copy(built.model, "cpu", dtype)
                self.train = train_run(golden_model, inputs, built, self.steps, seed_policy, record_grads=True)
                self.reference_train = train_run(model_copy(built.model, "cpu", torch.float64),
                                                 convert(built.inputs, "cpu", torch.float64), built, self.steps,
                                                 seed_policy)
                # The optimizer alone from the golden gradients: the golden's own parameters after each
                # step, and float64's from the same gradients (the rounding the dtype's step may make).
                self.optimizer_steps = optimizer_run(model_copy(built.model, "cpu", dtype), built, self.train.grads)
                self.reference_optimizer_steps = optimizer_run(
                    model_copy(built.model, "cpu", torch.float64), built,
                    [{k: (g.double() if g is not None else None) for k, g in step.items()} for step in self.train.grads])
        except Exception as e:  # noqa: BLE001  the model itself is broken in this dtype: no golden
            self.error = e


def _dtype(name):
    import torch
    if name not in DTYPES:
        raise ValueError(f"unknown dtype '{name}'; expected one of {', '.join(DTYPES)}")
    return getattr(torch, name)


def _device(name):
    """(torch.device, None) for a device name, the kind's runtime package imported and started first
    (runtimes.py: xla's torch_xla, as the worker does), or (the name, errors.describe() of why it
    cannot be set up): that device's `error`, whatever the others do."""
    import torch

    from crossdev import runtimes
    kind = str(name).split(":")[0]
    try:
        if kind == "sim":  # crossdev's simulated device: registered before torch can parse it
            import crossdev
            crossdev.sim.register()
        # Before any golden backward: autograd sizes its per-device queues at the first backward of the
        # process, and a kind whose runtime starts later fails there (runtimes.PythonRuntime.start).
        runtimes.load(kind)
        device = torch.device(name)
    except Exception as e:  # noqa: BLE001  the device cannot be set up: its own error, with the real cause
        described = errors.describe(e)
        described.update(category=None, recovery=[], recovery_text="",
                         summary=f"setting up device '{name}' failed: {described['summary']}")
        return str(name), described
    if device.type == "sim":
        if device.index is None:
            device = torch.device("sim", 0)
    elif device.type != "cpu" and device.index is None:
        device = torch.device(device.type, 0)
    return device, None


def _keeps_parameters(device, kind):
    """For sim: whether the kind it stands for keeps Parameter objects on `.to()` (placement.py), so
    its model copies are re-tied as that kind's would be; None for a real device (its own `.to()`)."""
    if getattr(device, "type", None) != "sim":
        return None
    if kind.split(":")[0] == "sim":  # compare_model(devices=["sim"]): the kind of the active profile
        import crossdev
        kind = crossdev.sim.config().get("emulates") or "sim"
    return kind.split(":")[0] in KEEPS_PARAMETERS


def _error_message(described) -> str:
    suffix = f" [classified {described['category']}; recovery: {described['recovery_text'] or 'none'}]" \
        if described["category"] else ""
    return described["summary"] + suffix


def _random_at(golden):
    """The seed policy's context for re-running one recorded call alone (localise), or None."""
    if golden.seed_policy == "none":
        return None
    return lambda call: randomness.masks(golden.seed_policy, call.draw_start)


@dataclass
class DeviceRuns:
    actual: Run
    training: Training | None
    optimizer_steps: list | None  # the parameters after each step, stepped from the golden gradients
    broken_ties: list  # placement.BrokenTie: the CPU's shared parameters the device copy split


def _device_runs(device, golden, checks, models, keeps_parameters) -> DeviceRuns:
    """The device's forward and backward, and for train its losses and its optimizer steps from the
    golden gradients, on copies placed as the device's `.to()` places them (keeps_parameters:
    _keeps_parameters). Raises what the device raises."""
    built, dtype, policy = golden.built, golden.dtype, golden.seed_policy
    place = lambda: model_copy(built.model, device, dtype, keeps_parameters)  # noqa: E731
    models.device = place()
    actual = run_model(models.device, convert(built.inputs, device, dtype), golden.grad_outputs,
                       keep_grads=golden.grad_outputs is not None, seed_policy=policy)
    training = optimizer_steps = None
    if "train" in checks:
        training = train_run(place(), convert(built.inputs, device, dtype), built, golden.steps, policy)
        optimizer_steps = optimizer_run(place(), built, golden.train.grads)
    return DeviceRuns(actual, training, optimizer_steps, broken_ties(built.model, models.device))


def _ties_outcome(golden, device, broken):
    """The CPU model's shared parameters (tied weights, a module used twice) kept on the device, or
    each split one named with its remedy; None when the model shares none."""
    from .placement import ties
    groups = ties(golden.built.model)
    if not groups:
        return None
    where = getattr(device, "type", str(device))
    return CheckOutcome("shared_parameters", not broken, len(groups), [" and ".join(b.names) for b in broken],
                        "; ".join(b.describe(where) for b in broken), 0.0)


def _judged(device, golden, checks, models, runs, result):
    """The DeviceResult of the device's runs: each check judged; the culprit localised on failure."""
    actual, training, optimizer_steps = runs.actual, runs.training, runs.optimizer_steps
    outcomes = {}
    ties_kept = _ties_outcome(golden, device, runs.broken_ties)
    if ties_kept is not None:  # first: a split tie explains the gradients that follow
        outcomes["shared_parameters"] = ties_kept
    outcomes["forward"] = _forward_outcome(actual, golden.run, golden.reference)
    if "backward" in checks and golden.grad_outputs is not None:
        outcomes["backward"] = _backward_outcome(actual, golden.run, golden.reference)
    if "train" in checks:
        outcomes["train"] = _train_outcome(training, golden.train, golden.reference_train)
    outcomes = {k: v for k, v in outcomes.items() if k in checks or k == "shared_parameters"}
    if "train" in checks:  # part of the train check: the optimizer's own error (docs/models.md)
        outcomes["optimizer_step"] = _optimizer_outcome(optimizer_steps, golden.optimizer_steps,
                                                        golden.reference_optimizer_steps)
    message = "; ".join(o.describe() for o in outcomes.values())
    along = {"depth": depth.inherited(golden.run.calls, actual.calls, golden.reference.calls, golden.dtype, outcomes),
             "losses": depth.losses(golden.train.losses, golden.reference_train.losses, training.losses)
             if "train" in checks else None}
    if all(o.passed for o in outcomes.values()):
        return result("pass", message, checks=outcomes, **along)
    failed = [k for k in ("forward", "backward") if k in outcomes and not outcomes[k].passed]
    if not failed:
        attribution = "; " + _train_attribution(outcomes) if "optimizer_step" in outcomes else ""
        return result("fail", message + attribution, checks=outcomes, **along)
    if failed == ["backward"] and _explained_by_ties(outcomes["backward"], runs.broken_ties):
        return result("fail", message + "; the gradients that differ are those of the split shared parameters: "
                      "each part gets only its own module's share, as training on the device would",
                      checks=outcomes, **along)
    phase = failed[0]
    localisation_error = ""
    try:
        divergence, layers = localise.localise(phase, golden.run.calls, actual.calls, models, device)
    except Exception as e:  # noqa: BLE001  the verdict stands; say why the culprit is unknown
        divergence, layers = None, []
        localisation_error = errors.describe(e)["text"]
        message += f"; localisation failed: {errors.describe(e)['summary']}"
    if divergence is not None:
        message += f"; first divergence: {divergence.describe()}"
    elif layers:
        message += f"; no module's own {phase} error is out of tolerance (the error accumulates)"
    along["depth"] = depth.with_own(along["depth"], layers)
    return result("fail", message, checks=outcomes, first_divergence=divergence, layers=layers,
                  localisation_error=localisation_error, **along)


def _explained_by_ties(backward, broken) -> bool:
    """Whether every differing gradient is a parameter the device copy split (placement.BrokenTie)."""
    split = {name for tie in broken for name in tie.names}
    return bool(broken) and all(name in split for name in backward.failing)


def _train_attribution(outcomes) -> str:
    """Outputs and gradients agree, yet training does not: the optimizer's own step (it diverges
    from the golden gradients too), or the error its gradients inherit along the trajectory."""
    own = outcomes["optimizer_step"]
    if not own.passed:
        return (f"outputs and gradients agree: the optimizer's steps diverge (its own error: stepped from the CPU "
                f"golden's gradients, {own.failing[0]} differs)")
    return ("the optimizer's steps agree when taken from the CPU golden's gradients: the divergence is inherited "
            "from the forward and backward along the trajectory (not the optimizer's own)")


def _tf32_switched_on(op, deployed) -> bool:
    """Whether the deployed switches run `op` in TF32: cuDNN's for convolutions, cuBLAS's for matmuls."""
    return deployed["cudnn_allow_tf32"] if "conv" in op else deployed["matmul_allow_tf32"]


def _tf32_ops(result, golden, models, device, deployed) -> list:
    """The TF32 ops (numerics.TF32_OPS) the first diverging module call reaches on the device, run alone
    as localisation ran it (the whole model's forward when no single call diverged), whose TF32 switch
    is on in the deployed settings."""
    calls, divergence = golden.run.calls, result.first_divergence
    layer = localise.culprit(result.layers, calls) if divergence is not None else None
    call = calls[layer.call_index] if layer is not None else calls[0]
    random = localise._random(models, call)
    with numerics.OpsSeen() as seen:
        if layer is not None and divergence.phase == "backward":
            localise._local_grads(localise._module(models.device, call.path), call, device, random=random)
        else:
            localise._forward_alone(models.device, call, device, random=random)
    return [op for op in seen.tf32_ops() if _tf32_switched_on(op, deployed)]


def _with_tf32_verdict(result, golden, models, device, deployed, run):
    """A failure under the deployed TF32: the device run repeated with TF32 off, and the message says
    which mode fails (numerics.tf32_verdict) and which TF32 ops the first diverging call reached."""
    ops = _tf32_ops(result, golden, models, device, deployed)
    try:
        with numerics.tf32_off():
            rerun = run()
    except Exception as e:  # noqa: BLE001  the verdict with TF32 on stands; say why the mode is unknown
        result.tf32_off_status = "error"
        result.message += f"; the rerun with TF32 off raised: {errors.describe(e)['summary']}"
        return result
    result.tf32_off_status = rerun.status
    result.message += "; " + numerics.tf32_verdict(ops, rerun.status == "pass")
    return result


def compare_on(device, golden, checks, recover=False, numerics_mode=numerics.DEFAULT_MODE, kind=None,
               setup_error=None) -> DeviceResult:
    """One device against the golden. numerics_mode (numerics.MODES): `parity` runs the device with TF32
    off, `deployed` under the process's switches, a failure with TF32 on then repeated with it off.
    kind: the device kind the case is about (sim under `--simulate cuda` is cuda), else device.type."""
    kind = kind or _kind_of(device)
    if setup_error is not None:  # the device could not be set up (_device): its error, with the real cause
        dtype_name = str(golden.dtype).replace("torch.", "")
        return DeviceResult(golden.built.name, str(device), dtype_name, "error", setup_error["summary"],
                            error=setup_error)
    deployed = numerics.settings()
    with numerics.case_context(numerics_mode, kind):
        result = _compare_on(device, golden, checks, recover, numerics_mode, kind, deployed)
    if kind.split(":")[0] in numerics.TF32_KINDS:
        result.numerics = numerics.record(numerics_mode, kind, deployed)
    return result


def _kind_of(device) -> str:
    return getattr(device, "type", None) or str(device).split(":")[0]


def _compare_on(device, golden, checks, recover, numerics_mode, kind, deployed) -> DeviceResult:
    name, dtype_name = golden.built.name, str(golden.dtype).replace("torch.", "")
    start = time.perf_counter()

    def result(status, message, **kw):
        return DeviceResult(name, str(device), dtype_name, status, message,
                            duration_s=time.perf_counter() - start, **kw)

    if golden.error is not None:
        described = errors.describe(golden.error)
        return result("error", f"no CPU golden: the model raised on the CPU in {dtype_name}: {described['summary']}",
                      error=described)
    if golden.run.random and golden.seed_policy == "none":
        return result("error", f"the forward draws random numbers ({', '.join(golden.run.random)}): devices' random "
                      "streams differ by design, so outputs cannot be compared; use the seed policy same_mask "
                      "(seed_policy: same_mask) to replay the CPU's masks on every device, or build the model in "
                      "eval() or without random ops in the factory")
    models = Models(golden.model, None, golden.reference_model, _random_at(golden))
    keeps = _keeps_parameters(device, kind)
    run = lambda: _judged(device, golden, checks, models, _device_runs(device, golden, checks, models, keeps),  # noqa: E731
                          result)
    try:
        judged = run()
        if judged.status == "fail" and numerics_mode == "deployed" and kind.split(":")[0] in numerics.TF32_KINDS \
                and numerics.tf32_on(deployed):
            return _with_tf32_verdict(judged, golden, models, device, deployed, run)
        return judged
    except Exception as e:  # noqa: BLE001  a device error is a result
        described = errors.describe(e)
    if not (recover and applicable(described)):
        return result("error", _error_message(described), error=described)
    # The recovery the classifier suggests, applied to the op that raised, and the device run again.
    recovery = OpRecovery(device)
    try:
        with recovery:
            rerun = run()
    except Exception as e:  # noqa: BLE001  the rerun raised too: its error, with what was tried
        again = errors.describe(e)
        described["recovered"] = {"applied": recovery.records(), "rerun_status": "error", "rerun_error": again["text"]}
        return result("error", f"{_error_message(described)}; recovered ({recovery.describe()}), the rerun raised: "
                      f"{_error_message(again)}", error=described)
    described["recovered"] = {"applied": recovery.records(), "rerun_status": rerun.status}
    rerun.error = described
    rerun.message = (f"{rerun.message}; recovered from {_error_message(described)}: applied {recovery.describe()}; "
                     f"the rerun is {rerun.status}")
    return rerun


def compare_model(model_fn, devices, dtypes=("float32",), checks=DEFAULT_CHECKS, steps=None, seed_policy=None,
                  recover=False, numerics_mode=numerics.DEFAULT_MODE) -> ModelComparison:
    """Compare a model on each device with the CPU golden. model_fn: a factory (callable taking no
    arguments, returning (model, inputs)) or its name 'module:callable'. devices: e.g. ["sim", "cuda"].
    checks: forward, backward (default) and train (the loss before and after each of `steps`
    optimizer steps; the factory returns a mapping with loss and optimizer).
    seed_policy: for a random forward (dropout in train mode): "none" refuses it (the result says
    so), "same_mask" replays the same masks on every device (default: the factory's, else none).
    recover: a device error that crossdev's classifier recognises is recovered (the op that raised
    runs as its class's recovery says) and the device run again; the result records both.
    numerics_mode: `parity` (default) runs each device with TF32 off, `deployed` under the process's
    switches (docs/models.md, "Numerics modes").
    Raises FactoryError for a factory that does not import, raises or returns the wrong thing, and
    ValueError for an unknown dtype, check or seed policy; a device's own error is an `error` result."""
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown check '{unknown[0]}'; expected one of {', '.join(CHECKS)}")
    if seed_policy is not None:
        randomness.check_policy(seed_policy)
    if numerics.check_mode(numerics_mode):
        raise ValueError(numerics.check_mode(numerics_mode))
    if isinstance(devices, str):
        devices = [devices]
    torch_dtypes = [_dtype(d) if isinstance(d, str) else d for d in dtypes]
    # Every device set up (sim registered, xla's runtime started) before the factory or any golden backward runs.
    targets = [_device(d) for d in devices]
    built = build(model_fn)
    if "train" in checks and (built.loss is None or built.optimizer is None):
        raise FactoryError(f"model factory '{built.name}': the train check needs a mapping with model, inputs, loss "
                           f"and optimizer ({TRAIN_CONTRACT}); it returned no {'loss' if built.loss is None else 'optimizer'}")
    steps = steps if steps is not None else (built.steps or DEFAULT_STEPS)
    policy = seed_policy or built.seed_policy or "none"
    results = []
    for dtype in torch_dtypes:
        golden = _Golden(built, dtype, checks, steps, policy)
        results.extend(compare_on(device, golden, checks, recover, numerics_mode, setup_error=setup_error)
                       for device, setup_error in targets)
    return ModelComparison(built.name, results)
