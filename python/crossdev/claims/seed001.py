"""Seed 001's claims about XLA/TPU, observed on a device (table.py names them).

Seed 001 says inference_mode breaks on TPU/XLA ("Cannot set version_counter for inference tensor")
and switches to no_grad there. Run on torch_xla's real xla device, the claim is narrower: only a
*view* of a tensor made outside the mode, taken inside it (t(), view, slicing: F.linear), raises;
elementwise ops work. Each function answers one outcome and the details that show it."""
from __future__ import annotations

WORKS, VERSION_COUNTER, OTHER_ERROR = "works", "raises_version_counter", "raises_other"
RAISES_OR_WORKS = (WORKS, VERSION_COUNTER, OTHER_ERROR)
VERSION_COUNTER_CATEGORY = "inference_tensor_version_counter"  # matrices/data/error_patterns.yaml
RECOVERY_OUTCOMES = ("no_error", "recovered", "not_recovered", "unclassified")
COMPILE_OUTCOMES = ("matches_eager", "differs_from_eager", "raises")
_SEED = 0


def _torch():
    import torch
    return torch


def _error(exc: BaseException) -> dict:
    from crossdev.models import errors
    return errors.describe(exc)


def _linear_inputs(device):
    """Weights and input made outside any inference context, as a model's parameters are."""
    torch = _torch()
    g = torch.Generator().manual_seed(_SEED)
    w = torch.randn(8, 16, generator=g)
    x = torch.randn(4, 16, generator=g)
    return w, x, w.to(device), x.to(device)


def _observe_raising(run) -> tuple:
    try:
        out = run()
        if hasattr(out, "cpu"):
            out.cpu()  # a lazy device (xla) runs the graph here: its error belongs to the claim
        return WORKS, {}
    except Exception as e:  # noqa: BLE001  the outcome under test
        d = _error(e)
        outcome = VERSION_COUNTER if d["category"] == VERSION_COUNTER_CATEGORY else OTHER_ERROR
        return outcome, {"error": d["summary"][:300], "category": d["category"] or "unclassified"}


def inference_mode_view(device):
    torch = _torch()
    _, _, w, x = _linear_inputs(device)

    def run():
        with torch.inference_mode():
            return torch.nn.functional.linear(x, w)
    return _observe_raising(run)


def inference_mode_elementwise(device):
    torch = _torch()
    _, _, w, _ = _linear_inputs(device)

    def run():
        with torch.inference_mode():
            return (w * 2 + 1).sum()
    return _observe_raising(run)


def no_grad_view(device):
    torch = _torch()
    _, _, w, x = _linear_inputs(device)

    def run():
        with torch.no_grad():
            return torch.nn.functional.linear(x, w)
    return _observe_raising(run)


def inference_mode_recovered(device):
    """The error F.linear raises under inference_mode, classified by crossdev's classifier; the class's
    recovery applied (use_no_grad: the same call under torch.no_grad()) and compared with the CPU."""
    torch = _torch()
    w_cpu, x_cpu, w, x = _linear_inputs(device)
    try:
        with torch.inference_mode():
            torch.nn.functional.linear(x, w).cpu()
        return "no_error", {}
    except Exception as e:  # noqa: BLE001  the error the recovery is for
        d = _error(e)
    details = {"error": d["summary"][:300], "category": d["category"] or "unclassified",
               "recovery": d["recovery_text"] or "none"}
    if d["category"] != VERSION_COUNTER_CATEGORY or not any("use_no_grad" in stage for stage in d["recovery"]):
        return ("unclassified" if not d["category"] else "not_recovered"), details
    try:
        with torch.no_grad():
            recovered = torch.nn.functional.linear(x, w).cpu()
    except Exception as e:  # noqa: BLE001  the recovery did not help: the claim's outcome
        details["recovery_error"] = _error(e)["summary"][:300]
        return "not_recovered", details
    golden = torch.nn.functional.linear(x_cpu, w_cpu)
    try:
        torch.testing.assert_close(recovered, golden)
    except AssertionError as e:
        details["recovered_vs_cpu"] = " ".join(str(e).split())[:300]
        return "not_recovered", details
    details["applied"] = "use_no_grad: the call rerun under torch.no_grad(), equal to the CPU (assert_close)"
    return "recovered", details


def device_string_tpu(device):
    torch = _torch()
    try:
        torch.device("tpu")
        return "accepted", {}
    except (RuntimeError, ValueError) as e:
        return "rejected", {"error": " ".join(str(e).split())[:300]}


def device_string_kind(device):
    torch = _torch()
    kind = device.type
    try:
        made = [str(torch.ones(2, device=torch.device(s)).device) for s in (kind, f"{kind}:0")]
    except (RuntimeError, ValueError) as e:
        return "rejected", {"error": " ".join(str(e).split())[:300]}
    return "usable", {"devices": ", ".join(made)}


def _autocast_dtype(device_type, device):
    torch = _torch()
    _, _, w, x = _linear_inputs(device)
    try:
        with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
            out = x @ w.t()
        return str(out.dtype).replace("torch.", ""), {}
    except (RuntimeError, ValueError, AttributeError) as e:
        return "rejected", {"error": f"{type(e).__name__}: " + " ".join(str(e).split())[:300]}


def autocast_kind(device):
    return _autocast_dtype(device.type, device)


def autocast_tpu(device):
    return _autocast_dtype("tpu", device)


def _compiled_against_eager(backend, device):
    torch = _torch()
    torch.manual_seed(_SEED)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8)).to(device)
    x = torch.randn(4, 16).to(device)
    try:
        with torch.no_grad():
            eager = model(x).cpu()
            compiled = torch.compile(model, backend=backend)(x).cpu()
    except Exception as e:  # noqa: BLE001  the outcome under test
        text = f"{type(e).__name__}: " + " ".join(str(e).split())
        return "raises", {"error": text[:300]}
    finally:
        torch._dynamo.reset()
    try:
        torch.testing.assert_close(compiled, eager)
    except AssertionError as e:
        return "differs_from_eager", {"difference": " ".join(str(e).split())[:300]}
    return "matches_eager", {}


def compile_openxla(device):
    return _compiled_against_eager("openxla", device)


def compile_inductor(device):
    return _compiled_against_eager("inductor", device)
