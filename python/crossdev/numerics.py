"""Device numerics modes: which of the process's numerics switches a parity case runs under.

PyTorch's own tests compare a device with the CPU with TF32 off (`with_tf32_off`, `tf32_on_and_off` in
torch/testing/_internal/common_cuda.py): TF32 keeps 10 bits of mantissa, so a TF32 matmul or cuDNN
convolution is ~1e-3 relative off where float32 is ~1e-7, by design. A parity row therefore runs
its cases in one of two modes (the row key `numerics`, MODES):
- `parity` (the default): TF32 off for the case, matmul and cuDNN alike, restored after it; what the
  device computes is compared at float32's tolerance;
- `deployed`: the process's settings as they are (PyTorch's defaults leave cuDNN's TF32 on); a sample
  that reaches a TF32 op (TF32_OPS) while TF32 is on is held to PyTorch's TF32 convention (TF32_ATOL as
  atol, unless the row's own `tolerance` replaces it), its source recorded; when a case fails, the device
  run is repeated with TF32 off and the message says which mode fails (tf32_verdict).
TF32 is a CUDA switch (torch.backends.cuda.matmul, torch.backends.cudnn); sim under the cuda profile
honours the same switches (docs/sim-backend.md), other kinds have none.

crossdev changes nothing in the process beyond a case: every switch is restored when it ends. Importing
op_db calls torch.backends.disable_global_flags(), so cuDNN's flag is switched through its flags()
context manager, as PyTorch's tests do.
"""
from __future__ import annotations

import contextlib

MODES = ("parity", "deployed")
DEFAULT_MODE = "parity"
TF32_KINDS = ("cuda",)  # device kinds whose results TF32 can change
# ATen ops that run in TF32 when it is on: cuBLAS's matmuls (matmul.allow_tf32) and cuDNN's convolutions.
TF32_OPS = ("mm", "bmm", "addmm", "baddbmm", "addbmm", "addmm_", "matmul", "linear", "_addmm_activation",
            "convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose",
            "convolution_backward", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d")
# PyTorch's TF32 convention (torch/testing/_internal/common_cuda.py): a test run with TF32 on compares with
# atol = its tf32_precision (tf32_on sets self.precision, which assertEqual takes as atol); the precision the
# file documents for a TF32 test is tf32_on_and_off(0.005).
TF32_ATOL = 0.005
TF32_SOURCE = "PyTorch's TF32 convention: atol=0.005 (torch/testing/_internal/common_cuda.py, tf32_on_and_off(0.005))"


def settings() -> dict:
    """The process's numerics switches now (recorded in each case of a kind they affect)."""
    import torch

    matmul = torch.backends.cuda.matmul
    return {"matmul_allow_tf32": bool(matmul.allow_tf32), "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "fp16_reduced_precision_reduction": bool(getattr(matmul, "allow_fp16_reduced_precision_reduction", False)),
            "bf16_reduced_precision_reduction": bool(getattr(matmul, "allow_bf16_reduced_precision_reduction", False)),
            "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
            "cudnn_deterministic": bool(torch.backends.cudnn.deterministic)}


def tf32_on(values: dict) -> bool:
    return values["matmul_allow_tf32"] or values["cudnn_allow_tf32"]


def describe(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def check_mode(value) -> str | None:
    """What is wrong with a row's `numerics` value, or None."""
    if value in MODES:
        return None
    return f"numerics: '{value}' is not a numerics mode; expected one of: {', '.join(MODES)}"


@contextlib.contextmanager
def tf32_off():
    """TF32 off for matmul and cuDNN, as PyTorch's with_tf32_off; every switch restored after."""
    import torch

    precision = torch.get_float32_matmul_precision()
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        with torch.backends.cudnn.flags(enabled=None, benchmark=None, deterministic=None, allow_tf32=False):
            yield
    finally:
        torch.set_float32_matmul_precision(precision)


def case_context(mode: str, kind: str):
    """The context a case of `kind` runs in under `mode`."""
    if mode == "parity" and kind.split(":")[0] in TF32_KINDS:
        return tf32_off()
    return contextlib.nullcontext()


def record(mode: str, kind: str, deployed: dict) -> str:
    """details.numerics of a case: the mode, what it ran under, the process's deployed switches."""
    if kind.split(":")[0] not in TF32_KINDS:
        return f"{mode}: no TF32 on {kind}; deployed: {describe(deployed)}"
    ran = "TF32 off for the case (matmul, cuDNN)" if mode == "parity" else \
        f"the deployed switches (TF32 {'on' if tf32_on(deployed) else 'off'})"
    return f"{mode}: {ran}; deployed: {describe(deployed)}"


class OpsSeen:
    """A dispatch mode that records the ATen ops a call reaches (their overload packets' names)."""

    def __init__(self):
        self.names = set()

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        names = self.names

        class _Seen(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                names.add(func.overloadpacket.__name__)
                return func(*args, **(kwargs or {}))

        self._mode = _Seen()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self._mode.__exit__(*exc)

    def tf32_ops(self) -> list:
        return sorted(n for n in self.names if n in TF32_OPS)


def tf32_verdict(tf32_ops: list, passes_without: bool) -> str:
    """The message's sentence on TF32 after a failure under TF32 on, once rerun with it off."""
    where = ", ".join(f"aten::{n}" for n in tf32_ops) or "no TF32 op seen"
    if passes_without:
        return f"passes with TF32 off: the difference is TF32 in {where}"
    return f"fails with TF32 off too: TF32 ({where}) does not explain the difference"
