"""Localisation: the culprit, not the first symptom (docs/models.md, "Localisation").

Teacher forcing: each module call is run alone on the device with the CPU golden's inputs to that
call (and, for gradients, the golden's gradient at its output), so its OWN error is measured apart
from the error it inherits. The culprit is the innermost failing call (no failing call inside it),
first in execution order (forward) or in backward order (gradients). Inside it, the ATen ops are
recorded on the device, the CPU and float64 (ops.OpRecorder) and the first op whose output is out
of tolerance is named."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

from .ops import OpRecorder
from .placement import convert
from .tolerance import judge, judge_all


@dataclass
class LayerError:
    """One module call's error on a device: inherited (the full run) and its own (teacher forced)."""
    path: str
    phase: str  # forward | backward
    inherited: float  # max_abs of the call's output (forward) in the device's full run against the golden; nan if unknown
    own: float  # max_abs with the golden's inputs
    passed: bool
    detail: str
    call_index: int  # the golden call (capture.ModuleCall.index)

    @property
    def name(self) -> str:
        return self.path or "(model)"


@dataclass
class Divergence:
    phase: str  # forward | backward
    module: str  # dotted path from named_modules() ("" = the model itself)
    op: str | None  # aten::gelu, or None when no single op is out of tolerance
    detail: str

    def describe(self) -> str:
        where = self.module or "(model)"
        return f"{where}" + (f" at {self.op}" if self.op else "") + f" ({self.phase})"


def _worst(judgements):
    """(passed, max own abs error, text of the worst failing or the largest) over [(i, Judgement)]."""
    if not judgements:
        return True, 0.0, "nothing to compare"
    failing = [j for _, j in judgements if not j.passed]
    pick = failing[0] if failing else max((j for _, j in judgements), key=lambda j: j.max_abs)
    return not failing, max(j.max_abs for _, j in judgements), pick.describe()


def _random(models, call):
    """The seed policy's context for re-running `call` alone: its draws replayed from where the
    golden's run made them (randomness.SameMasks), or nothing."""
    at = getattr(models, "random_at", None)
    return at(call) if at is not None else contextlib.nullcontext()


def _module(model, path):
    return model if path == "" else model.get_submodule(path)


def _inherited(golden_call, device_calls):
    if device_calls is None or golden_call.index >= len(device_calls):
        return float("nan")
    twin = device_calls[golden_call.index]
    if twin.path != golden_call.path:
        return float("nan")
    return _worst(judge_all(twin.output, golden_call.output))[1]


def _forward_alone(model, call, device, dtype=None, random=None):
    import torch
    with torch.no_grad(), random if random is not None else contextlib.nullcontext():
        return _module(model, call.path)(*convert(call.args, device, dtype), **convert(call.kwargs, device, dtype))


def forward_layers(calls, device_calls, models, device):
    """[LayerError] per golden call, teacher forced on the device. models: golden, device, reference."""
    import torch
    layers = []
    for call in calls:
        own = _forward_alone(models.device, call, device, random=_random(models, call))
        reference = _forward_alone(models.reference, call, "cpu", torch.float64, random=_random(models, call))
        passed, worst, detail = _worst(judge_all(own, call.output, reference))
        layers.append(LayerError(call.path, "forward", _inherited(call, device_calls), worst, passed, detail, call.index))
    return layers


def _local_grads(module, call, device, dtype=None, recorder=None, random=None):
    """Gradients of the call's floating inputs and of the module's parameters, given the golden's
    gradient at its output; None when no gradient reached the call."""
    import torch
    from torch.utils._pytree import tree_flatten
    args, kwargs = convert(call.args, device, dtype), convert(call.kwargs, device, dtype)
    leaves = [t.requires_grad_(True) for t in tree_flatten((args, kwargs))[0]
              if isinstance(t, torch.Tensor) and t.is_floating_point()]
    params = [p for _, p in module.named_parameters()]
    with random if random is not None else contextlib.nullcontext():
        outputs = tree_flatten(module(*args, **kwargs))[0]
    pairs = [(o, g) for o, g in zip(outputs, call.grad_output)
             if isinstance(o, torch.Tensor) and o.requires_grad and g is not None]
    targets = leaves + [p for p in params if p.requires_grad]
    if not pairs or not targets:
        return None
    grad_outputs = [convert(g, device, dtype) for _, g in pairs]
    with recorder if recorder is not None else contextlib.nullcontext():
        grads = torch.autograd.grad([o for o, _ in pairs], targets, grad_outputs, allow_unused=True)
    return [g.detach().cpu() if g is not None else None for g in grads]


def _judge_grads(actual, golden, reference):
    from .tolerance import Judgement
    out = []
    for i, (a, g) in enumerate(zip(actual, golden)):
        if a is None and g is None:
            continue
        if (a is None) != (g is None):
            out.append((i, Judgement(False, float("inf"), float("inf"), float("inf"), float("nan"), float("nan"),
                                     "a gradient on one side only")))
            continue
        out.append((i, judge(a, g, reference[i] if reference is not None else None)))
    return out


def backward_layers(calls, models, device):
    """[LayerError] per golden call that gradients reached, in backward order, teacher forced."""
    import torch
    layers = []
    for call in sorted(calls, key=lambda c: -c.finished):
        golden = _local_grads(_module(models.golden, call.path), call, "cpu", random=_random(models, call))
        if golden is None:
            continue
        own = _local_grads(_module(models.device, call.path), call, device, random=_random(models, call))
        reference = _local_grads(_module(models.reference, call.path), call, "cpu", torch.float64,
                                 random=_random(models, call))
        passed, worst, detail = _worst(_judge_grads(own, golden, reference))
        layers.append(LayerError(call.path, "backward", float("nan"), worst, passed, detail, call.index))
    return layers


def culprit(layers, calls):
    """The innermost failing call (no failing call inside it), first in the layers' order, or None."""
    parent_of = {c.index: c.parent for c in calls}
    failing = {layer.call_index for layer in layers if not layer.passed}
    enclosing = set()
    for i in failing:
        p = parent_of[i]
        while p is not None:
            enclosing.add(p)
            p = parent_of[p]
    return next((layer for layer in layers if layer.call_index in failing and layer.call_index not in enclosing), None)


def first_op(call, models, device, phase):
    """(op name, detail, repro) of the first ATen op in the call whose output is out of tolerance, or (None, why,
    None). repro: that op's overload, the CPU golden's inputs to it and the dtype's tolerance (`crossdev repro`)."""
    import torch
    recorded = {}
    for side, model, where, dtype in (("device", models.device, device, None), ("golden", models.golden, "cpu", None),
                                      ("reference", models.reference, "cpu", torch.float64)):
        recorder = OpRecorder(keep_inputs=side == "golden")  # the golden's op inputs: `crossdev repro`
        module = _module(model, call.path)
        if phase == "forward":
            args, kwargs = convert(call.args, where, dtype), convert(call.kwargs, where, dtype)
            with _random(models, call), recorder, torch.no_grad():
                module(*args, **kwargs)
        else:
            _local_grads(module, call, where, dtype, recorder, random=_random(models, call))
        recorded[side] = recorder.ops
    device_ops, golden_ops, reference_ops = recorded["device"], recorded["golden"], recorded["reference"]
    for i, (d, g) in enumerate(zip(device_ops, golden_ops)):
        if d.name != g.name:
            return d.name, f"op #{i} is {d.name} on the device but {g.name} on the CPU", None
        r = reference_ops[i] if i < len(reference_ops) and reference_ops[i].name == g.name else None
        for j, (x, y) in enumerate(zip(d.outputs, g.outputs)):
            z = r.outputs[j] if r is not None and j < len(r.outputs) else None
            verdict = judge(x, y, z)
            if not verdict.passed:
                from crossdev import parity
                rule = parity.compare(x.detach().cpu(), y.detach().cpu())  # the dtype's tolerance (rule 1)
                repro = {"func": g.func, "inputs": g.inputs, "index": i, "output": j, "phase": phase,
                         "rtol": float(rule["rtol"]), "atol": float(rule["atol"])}
                return d.name, f"op #{i} {d.name} output {j}: {verdict.describe()}", repro
    if len(device_ops) != len(golden_ops):  # one side ran more ops: the first extra one
        n = min(len(device_ops), len(golden_ops))
        extra, where = (device_ops[n], "on the device only") if len(device_ops) > n else (golden_ops[n], "on the CPU only")
        return (extra.name, f"op #{n} {extra.name} runs {where} ({len(device_ops)} ops on the device, "
                f"{len(golden_ops)} on the CPU)", None)
    return None, f"no single op of its {len(device_ops)} is out of tolerance", None


def localise(phase, calls, device_calls, models, device):
    """(Divergence or None, [LayerError]) for one phase."""
    layers = forward_layers(calls, device_calls, models, device) if phase == "forward" \
        else backward_layers(calls, models, device)
    layer = culprit(layers, calls)
    if layer is None:
        return None, layers
    op, op_detail, repro = first_op(calls[layer.call_index], models, device, phase)
    divergence = Divergence(phase, layer.path, op, f"own error {layer.detail}; {op_detail}")
    divergence.repro = repro  # not a field: the result's asdict leaves it out (tensors)
    return divergence, layers
