"""crossdev/xla_lowering.py: a case on a real xla device is labelled from torch_xla's own counters, as
sim's cases are by kernel_source.py: lowered to XLA, partly or wholly run by torch_xla's ATen CPU
fallback (a pass that never left the CPU proves the plumbing only), with its compile count and time.
torch_xla's metrics module is played by a stand-in whose counters the test moves (the real counters
are read under `make xla`, docs/xla.md)."""
import sys
import types

import pytest

from crossdev import xla_lowering


class FakeMetrics(types.ModuleType):
    def __init__(self):
        super().__init__("torch_xla.debug.metrics")
        self.counters, self.compile_ns = {}, 0.0

    def counter_names(self):
        return list(self.counters)

    def counter_value(self, name):
        return self.counters.get(name)

    def metric_data(self, name):
        return (1, self.compile_ns, ()) if name == "CompileTime" else None


@pytest.fixture
def metrics(monkeypatch):
    fake = FakeMetrics()
    for name, module in (("torch_xla", types.ModuleType("torch_xla")),
                         ("torch_xla.debug", types.ModuleType("torch_xla.debug")),
                         ("torch_xla.debug.metrics", fake)):
        monkeypatch.setitem(sys.modules, name, module)
    sys.modules["torch_xla"].debug = sys.modules["torch_xla.debug"]
    sys.modules["torch_xla.debug"].metrics = fake
    return fake


def record(metrics, moves, compile_s=0.0):
    metrics.counters.update({"xla::mm": 5, "aten::roll": 2, "UncachedCompile": 7})  # before: not this case's
    with xla_lowering.Recorder() as rec:
        for name, by in moves.items():
            metrics.counters[name] = metrics.counters.get(name, 0) + by
        metrics.compile_ns += compile_s * 1e9
    return rec


def test_a_case_whose_ops_were_all_lowered(metrics):
    rec = record(metrics, {"xla::mm": 1, "xla::add": 2, "xla::_to_copy": 3, "UncachedCompile": 2, "ExecuteComputation": 2},
                 compile_s=1.5)
    d = rec.details()
    assert d["kernel_source"] == xla_lowering.LOWERED and d["device_kernels"] == "lowered: add, mm"
    assert d["xla_compiles"].startswith("2 graphs compiled in 1.50 s") and "2 executions" in d["xla_compiles"]
    assert rec.metrics()["xla_fallback_ops"] == 0.0 and rec.metrics()["xla_compiles"] == 2.0


def test_a_case_that_reached_the_cpu_fallback_says_which_ops(metrics):
    rec = record(metrics, {"xla::mm": 1, "aten::roll": 1})
    assert rec.label() == xla_lowering.PARTLY and rec.details()["device_kernels"] == "lowered: mm; aten cpu fallback: roll"


def test_a_case_that_never_left_the_cpu_is_labelled_plumbing_only(metrics):
    rec = record(metrics, {"aten::_chunk_cat": 1, "xla::_to_copy": 2, "xla::empty_symint": 1})
    assert rec.label() == xla_lowering.FALLBACK
    assert "plumbing only" in xla_lowering.MEANING[rec.label()]


def test_only_transfers_is_no_op(metrics):
    assert record(metrics, {"xla::_to_copy": 2}).label() == xla_lowering.NOTHING
