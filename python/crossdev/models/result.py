"""The result of comparing one model on devices: one DeviceResult per device x dtype, whose repr
is one report line; ModelComparison's repr is the report, a line per device."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field


def _number(value):
    """JSON has no NaN or infinity: null (the bundle's rule for non-finite numbers)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _plain(record: dict) -> dict:
    return {k: _number(v) for k, v in record.items()}


@dataclass
class CheckOutcome:
    # forward | backward | train | optimizer_step (part of train: stepped from the golden gradients) |
    # shared_parameters (always, for a model that shares any: the CPU's ties kept on the device; placement.py)
    check: str
    passed: bool
    compared: int  # tensors compared (outputs, or parameters' gradients)
    failing: list  # names of the failing tensors ("output[0]", "mlp.fc1.weight")
    worst: str  # the first failing tensor's judgement, or the largest error when all pass
    max_abs: float
    float64_rule_passes: int = 0  # tensors outside the dtype's tolerance that the float64 rule passed
    float64_rule: str = ""  # the first of them: "output[0]: device 2e-06 from float64, CPU golden 1e-06: within 4x"

    def describe(self) -> str:
        what = {"forward": "outputs", "backward": "gradients", "train": "losses",
                "optimizer_step": "parameters stepped from the golden gradients",
                "shared_parameters": "shared parameters"}[self.check]
        if self.check == "shared_parameters":
            return (f"shared_parameters: {self.compared} {what} kept" if self.passed else
                    f"shared_parameters: {len(self.failing)}/{self.compared} {what} split: {self.worst}")
        if self.passed:
            by_rule = f"; {self.float64_rule_passes} by the float64 rule, first {self.float64_rule}" \
                if self.float64_rule_passes else ""
            return f"{self.check}: {self.compared} {what} agree (max_abs {self.max_abs:.3g}{by_rule})"
        return f"{self.check}: {len(self.failing)}/{self.compared} {what} differ, first {self.failing[0]}: {self.worst}"


@dataclass
class DeviceResult:
    model: str
    device: str
    dtype: str
    status: str  # pass | fail | error
    message: str
    checks: dict = field(default_factory=dict)  # check -> CheckOutcome
    first_divergence: object = None  # localise.Divergence, when a check failed
    layers: list = field(default_factory=list)  # localise.LayerError per module call, when localised
    # depth.DepthPoint per module call and phase: the inherited error always, the own where localised
    depth: list = field(default_factory=list)
    losses: dict | None = None  # train: {"golden", "float64", "device"}: the loss before each step and after the last
    error: dict | None = None  # errors.describe() of the device's exception
    duration_s: float = 0.0
    numerics: str = ""  # numerics.record(): the mode and the switches the case ran under (kinds TF32 affects)
    localisation_error: str = ""  # localisation raised: the verdict stands, this says why no culprit is named
    tf32_off_status: str | None = None  # deployed mode, failed with TF32 on: the status of the rerun with it off

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __repr__(self) -> str:
        return f"{self.model} on {self.device} {self.dtype}: {self.status} - {self.message}"

    def to_dict(self) -> dict:
        """Plain values (JSON): what a bundle's case carries."""
        out = {k: getattr(self, k) for k in ("model", "device", "dtype", "status", "message", "error", "duration_s", "numerics",
                                              "tf32_off_status", "localisation_error")}
        out["checks"] = {k: asdict(v) for k, v in self.checks.items()}
        out["first_divergence"] = asdict(self.first_divergence) if self.first_divergence is not None else None
        out["layers"] = [_plain(asdict(layer)) for layer in self.layers]
        out["depth"] = [_plain(asdict(point)) for point in self.depth]
        out["losses"] = {k: [_number(v) for v in values] for k, values in self.losses.items()} if self.losses else None
        return out

    def depth_table(self) -> str:
        """The error along the depth, one line per module call: inherited (the full run) and own."""
        rows = [f"{'module':<32} {'phase':<8} {'inherited':>10} {'own':>10}  verdict"]
        for layer in self.layers:
            rows.append(f"{layer.name:<32} {layer.phase:<8} {layer.inherited:>10.3g} {layer.own:>10.3g}  "
                        f"{'ok' if layer.passed else 'OUT OF TOLERANCE'}")
        return "\n".join(rows)


class ModelComparison:
    """What compare_model returns: iterate for the DeviceResults; `passed` when all pass."""

    def __init__(self, model: str, results: list):
        self.model = model
        self.results = results

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def __iter__(self):
        return iter(self.results)

    def __len__(self):
        return len(self.results)

    def __getitem__(self, key):
        """By position, or by device ("sim:0", or "sim:0/float32" when several dtypes ran)."""
        if isinstance(key, int):
            return self.results[key]
        found = [r for r in self.results if key in (r.device, f"{r.device}/{r.dtype}")]
        if len(found) != 1:
            known = ", ".join(f"{r.device}/{r.dtype}" for r in self.results)
            raise KeyError(f"{key!r} names {len(found)} results; results: {known}")
        return found[0]

    def __repr__(self) -> str:
        return "\n".join(repr(r) for r in self.results) or f"{self.model}: no device compared"
