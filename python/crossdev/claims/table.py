"""The claims `suite: claims` rows can name, one record each (as an OpInfo keeps all about an op).

A claim's `observe(device)` runs on the device and returns what it saw, one of its `outcomes`,
and the details that show it; a row says which outcome it expects on each of its device kinds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import seed001


@dataclass(frozen=True)
class Claim:
    name: str
    source: str
    observes: str
    outcomes: tuple  # what observe() can answer
    observe: Callable  # (torch.device) -> (outcome, {detail: text})


CLAIMS = (
    Claim("inference_mode_view", "seed 001: TPU Version Counter Errors",
          "a view (t(), as F.linear takes) of a tensor made outside torch.inference_mode(), taken inside it",
          seed001.RAISES_OR_WORKS, seed001.inference_mode_view),
    Claim("inference_mode_elementwise", "seed 001: TPU Version Counter Errors",
          "an elementwise op on a tensor made outside torch.inference_mode(), inside it",
          seed001.RAISES_OR_WORKS, seed001.inference_mode_elementwise),
    Claim("no_grad_view", "seed 001: get_inference_context (torch.no_grad() for TPU/XLA)",
          "the same view and F.linear under torch.no_grad()", seed001.RAISES_OR_WORKS, seed001.no_grad_view),
    Claim("inference_mode_recovered", "seed 001 + seed 003: the error classified, its recovery applied",
          "F.linear under inference_mode; an error is classified by crossdev's classifier and the class's recovery "
          "(use_no_grad) applied, and the recovered result compared with the CPU",
          seed001.RECOVERY_OUTCOMES, seed001.inference_mode_recovered),
    Claim("device_string_tpu", "seed 001: Device String Issues (tpu -> xla)",
          "torch.device('tpu')", ("rejected", "accepted"), seed001.device_string_tpu),
    Claim("device_string_kind", "seed 001: Device String Issues (tpu -> xla)",
          "torch.device('<kind>') and '<kind>:0' made and used for a tensor", ("usable", "rejected"),
          seed001.device_string_kind),
    Claim("autocast_kind", "seed 001: get_autocast_device",
          "torch.autocast(device_type=<kind>, dtype=bfloat16) around a matmul: the output's dtype",
          ("bfloat16", "float32", "rejected"), seed001.autocast_kind),
    Claim("autocast_tpu", "seed 001: get_autocast_device (tpu -> xla)",
          "torch.autocast(device_type='tpu', dtype=bfloat16)", ("bfloat16", "float32", "rejected"),
          seed001.autocast_tpu),
    Claim("compile_openxla", "seed 004 / torch_xla: torch.compile backends",
          "torch.compile(backend='openxla') of a small MLP against eager on the device",
          seed001.COMPILE_OUTCOMES, seed001.compile_openxla),
    Claim("compile_inductor", "seed 004: torch.compile eligibility",
          "torch.compile(backend='inductor') of a small MLP against eager on the device",
          seed001.COMPILE_OUTCOMES, seed001.compile_inductor),
)
BY_NAME = {c.name: c for c in CLAIMS}
