"""compare_model: build on the CPU, copy to each device, compare forward outputs and every
parameter's gradient with the CPU golden (and a float64 CPU run bounding the expected error), and
localise the culprit when a comparison fails (docs/models.md)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from . import depth, errors, localise
from .capture import CallRecorder
from .factory import TRAIN_CONTRACT, FactoryError, build
from .ops import OpRecorder, random_ops
from .placement import convert, model_copy
from .result import CheckOutcome, DeviceResult, ModelComparison
from .tolerance import judge, judge_all

CHECKS = ("forward", "backward", "train")
DEFAULT_CHECKS = ("forward", "backward")
DEFAULT_STEPS = 5
DTYPES = ("float32", "float16", "bfloat16", "float64")
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


def _grad_outputs(outputs, dtype):
    """Fixed random gradients for each output that requires grad (not ones: a sum would hide
    errors that cancel), generated in float64 and rounded to the dtype, the same on every device."""
    import torch
    from torch.utils._pytree import tree_flatten
    generator = torch.Generator().manual_seed(GRAD_OUTPUT_SEED)
    return [(torch.rand(t.shape, generator=generator, dtype=torch.float64) * 2 - 1).to(dtype)
            if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point() else None
            for t in tree_flatten(outputs)[0]]


def run_model(model, inputs, grad_outputs=None, keep_inputs=False, keep_grads=False, watch_random=False):
    """One forward (module calls recorded), and a backward with grad_outputs when given (a list, one
    per flattened output, or a callable making it from the outputs)."""
    import contextlib

    import torch
    from torch.utils._pytree import tree_flatten
    model.zero_grad(set_to_none=True)
    recorder = OpRecorder(keep_outputs=False) if watch_random else contextlib.nullcontext()
    with CallRecorder(model, keep_inputs=keep_inputs, keep_grads=keep_grads) as calls, recorder:
        outputs = model(*inputs)
    if callable(grad_outputs):
        grad_outputs = grad_outputs(outputs)
    pairs = [(o, g) for o, g in zip(tree_flatten(outputs)[0], grad_outputs or []) if g is not None]
    if pairs:
        torch.autograd.backward([o for o, _ in pairs], [g.to(device=o.device, dtype=o.dtype) for o, g in pairs])
    grads = {name: (p.grad.detach().cpu() if p.grad is not None else None) for name, p in model.named_parameters()}
    return Run(outputs, grads, calls, random_ops(recorder.ops) if watch_random else [], grad_outputs)


def train_losses(model, inputs, built, steps):
    """The loss before each of `steps` optimizer steps and after the last: steps + 1 values on the CPU."""
    import torch
    optimizer = built.optimizer(model.parameters())
    losses = []
    for step in range(steps + 1):
        optimizer.zero_grad(set_to_none=True)
        loss = built.loss(model(*inputs), *inputs)
        losses.append(loss.detach().reshape(()).cpu())
        if step < steps:
            loss.backward()
            optimizer.step()
    return torch.stack(losses)


def _train_outcome(actual, golden, reference):
    """Each step's loss judged alone: the float64 rule bounds it by the CPU's own error at that step,
    which the optimizer amplifies as it amplifies the device's (docs/models.md, "The train check")."""
    judgements = [(i, judge(actual[i:i + 1], golden[i:i + 1], reference[i:i + 1])) for i in range(len(golden))]
    return _outcome("train", judgements, [f"loss after step {i}" for i in range(len(golden))])


def _outcome(check, judgements, names):
    failing = [names[i] for i, j in judgements if not j.passed]
    first = next((j for _, j in judgements if not j.passed), None)
    largest = max((j.max_abs for _, j in judgements), default=0.0)
    return CheckOutcome(check, not failing, len(judgements), failing,
                        (first.describe() if first else ""), largest)


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

    def __init__(self, built, dtype, checks, steps=DEFAULT_STEPS):
        import torch
        self.built, self.dtype, self.steps = built, dtype, steps
        self.model = model_copy(built.model, "cpu", dtype)
        self.reference_model = model_copy(built.model, "cpu", torch.float64)
        inputs = convert(built.inputs, "cpu", dtype)
        self.error = None
        try:
            backward = "backward" in checks
            self.run = run_model(self.model, inputs, (lambda out: _grad_outputs(out, dtype)) if backward else None,
                                 keep_inputs=True, keep_grads=backward, watch_random=True)
            self.grad_outputs = self.run.grad_outputs
            reference_grads = [g.double() if g is not None else None for g in self.grad_outputs or []]
            self.reference = run_model(self.reference_model, convert(built.inputs, "cpu", torch.float64),
                                       reference_grads or None, keep_grads=backward)
            if "train" in checks:
                self.train = train_losses(model_copy(built.model, "cpu", dtype), inputs, built, self.steps)
                self.reference_train = train_losses(model_copy(built.model, "cpu", torch.float64),
                                                    convert(built.inputs, "cpu", torch.float64), built, self.steps)
        except Exception as e:  # noqa: BLE001  the model itself is broken in this dtype: no golden
            self.error = e


def _dtype(name):
    import torch
    if name not in DTYPES:
        raise ValueError(f"unknown dtype '{name}'; expected one of {', '.join(DTYPES)}")
    return getattr(torch, name)


def _device(name):
    import torch
    if str(name).split(":")[0] == "sim":  # crossdev's simulated device: registered before torch can parse it
        import crossdev
        crossdev.sim.register()
    device = torch.device(name)
    if device.type == "sim":
        if device.index is None:
            device = torch.device("sim", 0)
    elif device.type != "cpu" and device.index is None:
        device = torch.device(device.type, 0)
    return device


def compare_on(device, golden, checks) -> DeviceResult:
    name, dtype_name = golden.built.name, str(golden.dtype).replace("torch.", "")
    start = time.perf_counter()

    def result(status, message, **kw):
        return DeviceResult(name, str(device), dtype_name, status, message,
                            duration_s=time.perf_counter() - start, **kw)

    if golden.error is not None:
        described = errors.describe(golden.error)
        return result("error", f"no CPU golden: the model raised on the CPU in {dtype_name}: {described['summary']}",
                      error=described)
    if golden.run.random:
        return result("error", f"the forward draws random numbers ({', '.join(golden.run.random)}): devices' random "
                      "streams differ by design, so outputs cannot be compared; build the model in eval() or "
                      "without random ops in the factory")
    models = Models(golden.model, None, golden.reference_model)
    try:
        models.device = model_copy(golden.built.model, device, golden.dtype)
        actual = run_model(models.device, convert(golden.built.inputs, device, golden.dtype), golden.grad_outputs,
                           keep_grads=golden.grad_outputs is not None)
        if "train" in checks:
            device_train = train_losses(model_copy(golden.built.model, device, golden.dtype),
                                        convert(golden.built.inputs, device, golden.dtype), golden.built, golden.steps)
    except Exception as e:  # noqa: BLE001  a device error is a result
        described = errors.describe(e)
        suffix = f" [classified {described['category']}; recovery: {described['recovery_text'] or 'none'}]" \
            if described["category"] else ""
        return result("error", described["summary"] + suffix, error=described)
    outcomes = {"forward": _forward_outcome(actual, golden.run, golden.reference)}
    if "backward" in checks and golden.grad_outputs is not None:
        outcomes["backward"] = _backward_outcome(actual, golden.run, golden.reference)
    if "train" in checks:
        outcomes["train"] = _train_outcome(device_train, golden.train, golden.reference_train)
    outcomes = {k: v for k, v in outcomes.items() if k in checks}
    message = "; ".join(o.describe() for o in outcomes.values())
    along = {"depth": depth.inherited(golden.run.calls, actual.calls, golden.reference.calls, golden.dtype, outcomes),
             "losses": depth.losses(golden.train, golden.reference_train, device_train) if "train" in checks else None}
    if all(o.passed for o in outcomes.values()):
        return result("pass", message, checks=outcomes, **along)
    failed = [k for k in ("forward", "backward") if k in outcomes and not outcomes[k].passed]
    if not failed:
        return result("fail", message + "; outputs and gradients agree: the optimizer's steps diverge", checks=outcomes,
                      **along)
    phase = failed[0]
    try:
        divergence, layers = localise.localise(phase, golden.run.calls, actual.calls, models, device)
    except Exception as e:  # noqa: BLE001  the verdict stands; say why the culprit is unknown
        divergence, layers = None, []
        message += f"; localisation failed: {type(e).__name__}: {e}"
    if divergence is not None:
        message += f"; first divergence: {divergence.describe()}"
    elif layers:
        message += f"; no module's own {phase} error is out of tolerance (the error accumulates)"
    along["depth"] = depth.with_own(along["depth"], layers)
    return result("fail", message, checks=outcomes, first_divergence=divergence, layers=layers, **along)


def compare_model(model_fn, devices, dtypes=("float32",), checks=DEFAULT_CHECKS, steps=None) -> ModelComparison:
    """Compare a model on each device with the CPU golden. model_fn: a factory (callable taking no
    arguments, returning (model, inputs)) or its name 'module:callable'. devices: e.g. ["sim", "cuda"].
    checks: forward, backward (default) and train (the loss before and after each of `steps`
    optimizer steps; the factory returns a mapping with loss and optimizer).
    Raises FactoryError for a factory that does not import, raises or returns the wrong thing, and
    ValueError for an unknown dtype or check; a device's own error is an `error` result."""
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown check '{unknown[0]}'; expected one of {', '.join(CHECKS)}")
    if isinstance(devices, str):
        devices = [devices]
    torch_dtypes = [_dtype(d) if isinstance(d, str) else d for d in dtypes]
    targets = [_device(d) for d in devices]  # sim registered before the factory or autograd runs
    built = build(model_fn)
    if "train" in checks and (built.loss is None or built.optimizer is None):
        raise FactoryError(f"model factory '{built.name}': the train check needs a mapping with model, inputs, loss "
                           f"and optimizer ({TRAIN_CONTRACT}); it returned no {'loss' if built.loss is None else 'optimizer'}")
    steps = steps if steps is not None else (built.steps or DEFAULT_STEPS)
    results = []
    for dtype in torch_dtypes:
        golden = _Golden(built, dtype, checks, steps)
        results.extend(compare_on(device, golden, checks) for device in targets)
    return ModelComparison(built.name, results)
