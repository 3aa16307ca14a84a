"""What a case really ran on a real `xla` device (torch_xla), read from torch_xla's own counters
(`torch_xla.debug.metrics`), as kernel_source.py says it for sim.

torch_xla lowers an ATen op to XLA (`xla::<op>` counters) or, where it has no lowering, runs the
CPU's ATen kernel on a copy and moves the result back (`aten::<op>` counters: its CPU fallback). A
case whose every op fell back never left the CPU: its pass proves the plumbing only. Each new shape
compiles a graph (`UncachedCompile`, `CompileTime`): expected on XLA, reported, never a failure.

    with Recorder() as rec:   # around the case's device work
        ...
    case["details"].update(rec.details())
"""
from __future__ import annotations

LOWERED = "xla_lowered"            # every op the case reached has an XLA lowering
PARTLY = "xla_partly_fallback"     # some ops ran the CPU's kernel through torch_xla's fallback
FALLBACK = "xla_cpu_fallback"      # every op the case reached ran the CPU's kernel: the plumbing only
NOTHING = "xla_no_op"              # no op ran on the device (only transfers)
MEANING = {
    LOWERED: "every ATen op the case reached was lowered to XLA and compiled",
    PARTLY: "some ATen ops ran the CPU's kernel through torch_xla's fallback, the rest were lowered to XLA",
    FALLBACK: "every ATen op ran the CPU's kernel through torch_xla's fallback: the pass proves the plumbing only",
    NOTHING: "no ATen op ran on the device, only transfers",
}
TITLES = ((LOWERED, "lowered to XLA"), (PARTLY, "partly CPU fallback"), (FALLBACK, "only CPU fallback"),
          (NOTHING, "transfers only"))  # the report's columns, in this order
# torch_xla's own data movement and bookkeeping, not the op under test.
_PLUMBING = ("_to_copy", "_copy_from", "_copy_from_and_resize", "empty_symint", "empty_strided_symint", "clone",
             "_propagate_xla_data", "fill_", "copy_", "view_copy", "as_strided_copy", "detach_copy")


def _metrics():
    import torch_xla.debug.metrics as met
    return met


def _counters() -> dict:
    met = _metrics()
    return {n: met.counter_value(n) or 0 for n in met.counter_names()}


def _compile_time_ns() -> float:
    data = _metrics().metric_data("CompileTime")
    return float(data[1]) if data else 0.0


class Recorder:
    """Counters before and after a block of device work."""

    def __enter__(self):
        self._before = _counters()
        self._compile_ns = _compile_time_ns()
        return self

    def __exit__(self, *exc):
        after = _counters()
        self.delta = {n: v - self._before.get(n, 0) for n, v in after.items() if v != self._before.get(n, 0)}
        self.compile_s = (_compile_time_ns() - self._compile_ns) / 1e9
        return False

    def ops(self, prefix: str) -> list[str]:
        return sorted(n[len(prefix):] for n, v in self.delta.items()
                      if n.startswith(prefix) and v > 0 and n[len(prefix):] not in _PLUMBING)

    def label(self) -> str:
        lowered, fallback = self.ops("xla::"), self.ops("aten::")
        if not lowered and not fallback:
            return NOTHING
        if not fallback:
            return LOWERED
        return FALLBACK if not lowered else PARTLY

    def details(self) -> dict:
        lowered, fallback = self.ops("xla::"), self.ops("aten::")
        parts = []
        if lowered:
            parts.append("lowered: " + ", ".join(lowered))
        if fallback:
            parts.append("aten cpu fallback: " + ", ".join(fallback))
        return {"kernel_source": self.label(),
                "device_kernels": "; ".join(parts) or "only transfers",
                "xla_compiles": f"{self.delta.get('UncachedCompile', 0)} graphs compiled in {self.compile_s:.2f} s, "
                                f"{self.delta.get('CachedCompile', 0)} from the cache, "
                                f"{self.delta.get('ExecuteComputation', 0)} executions"}

    def metrics(self) -> dict:
        return {"xla_compiles": float(self.delta.get("UncachedCompile", 0)), "xla_compile_s": self.compile_s,
                "xla_fallback_ops": float(len(self.ops("aten::")))}
