"""matrices/bench/sweep.yaml (bench/python/sweep.py) and the per-call figure (bench/python/per_call.py):
the sweep's sizes come from the one data file, sizes an op's layout cannot take are rounded up and
named, and the per-call figure runs on the data's thread count and shape. No timing thresholds: the
targets live in bench/summarize.py, judged on the benchmark's figures, never in a test."""
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "python"))
import peer_impls  # noqa: E402
import per_call  # noqa: E402
import sweep  # noqa: E402
from yaml_input import InputError  # noqa: E402

K, M = 1024, 1024 * 1024
LAYOUTS = [("modulate", 1024, "x[B, T, 1024]"), ("scaled_masked_softmax", 256 * K, "scores[B, 8, 128, 256]")]


def test_the_sweep_runs_from_1k_to_8m_fp32_forward():
    spec, call = sweep.load(sweep.SWEEP_PATH, peer_impls.FWD_IMPLS)
    assert [label for _, label in spec.sizes] == ["1K", "4K", "16K", "64K", "256K", "1M", "8M"]
    assert spec.sizes[0][0] == K and spec.sizes[-1][0] == 8 * M
    assert spec.dtypes == ("float32",) and spec.passes == ("fwd",)
    assert {"fused", "fused.out", "aten"} <= set(spec.impls)
    assert call.shape == (2, 8, 64) and call.threads == 1 and call.dtype == "float32"


def test_sizes_below_a_granule_are_rounded_up_once_and_named():
    spec, _ = sweep.load(sweep.SWEEP_PATH, peer_impls.FWD_IMPLS)
    cases, notes = sweep.sweep_cases(spec, LAYOUTS)
    by_op = {}
    for op, dtype, elements, label, pass_name, seed in cases:
        by_op.setdefault(op, []).append(label)
        assert (dtype, pass_name, seed) == ("float32", "fwd", 0)
    assert by_op["modulate"] == [label for _, label in spec.sizes]
    assert by_op["scaled_masked_softmax"] == ["256K", "1M", "8M"]
    (note,) = notes
    assert note.startswith("scaled_masked_softmax:") and "1K -> 256K" in note and "64K -> 256K" in note


def test_a_size_that_is_no_multiple_is_rounded_up_to_the_next_one(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP.replace("[1K, 8M]", "[1000, 300K]"))
    spec, _ = sweep.load(path)
    cases, notes = sweep.sweep_cases(spec, LAYOUTS)
    assert [c[3] for c in cases if c[0] == "modulate"] == ["1K", "300K"]
    assert [c[3] for c in cases if c[0] == "scaled_masked_softmax"] == ["256K", "512K"]
    assert "1000 -> 1K" in notes[0] and "300K -> 512K" in notes[1]


SWEEP = """suite: bench_sweep
sweep: {sizes: [1K, 8M], dtypes: [float32], passes: [fwd], impls: [fused, aten], repetitions: 2, min_time: 0.01}
per_call: {shape_set: basic, shape: [2, 8, 64], dtype: float32, threads: 1, repetitions: 2, min_time: 0.01}
"""


@pytest.mark.parametrize("old, new, expected", [
    ("[1K, 8M]", "[1K, 8Q]", "size '8Q'"),
    ("impls: [fused, aten]", "impls: [fused, nope]", "unknown nope"),
    ("passes: [fwd]", "passes: [bwd]", "unknown bwd"),
    ("repetitions: 2, min_time: 0.01}\nper", "repetitions: 0, min_time: 0.01}\nper", "sweep.repetitions"),
    ("threads: 1", "threads: 0", "per_call.threads"),
    ("shape: [2, 8, 64]", "shape: [2, -8]", "per_call.shape"),
    ("min_time: 0.01}\nper", "min_time: 0.01, typo: 1}\nper", "unknown key(s) typo"),
    ("suite: bench_sweep", "suite: bench", "expected suite: bench_sweep"),
])
def test_bad_sweep_files_name_the_file_and_key(tmp_path, old, new, expected):
    path = tmp_path / "sweep.yaml"
    assert old in SWEEP
    path.write_text(SWEEP.replace(old, new))
    with pytest.raises(InputError, match=r"sweep\.yaml") as info:
        sweep.load(path, peer_impls.FWD_IMPLS)
    assert expected in str(info.value)


class _Timing:
    """timing.measure's interface without the clock: calls each step once and records the thread count."""

    def __init__(self, torch):
        self.torch, self.threads = torch, []

    def measure(self, step, repetitions, min_time):
        step()
        self.threads.append(self.torch.get_num_threads())
        return "measured"

    def measure_interleaved(self, steps, repetitions, min_time):
        return {impl: self.measure(step, repetitions, min_time) for impl, step in steps.items()}


def test_per_call_uses_the_data_shape_and_one_thread_then_restores(crossdev_module):
    import torch
    _, spec = sweep.load(sweep.SWEEP_PATH, peer_impls.FWD_IMPLS)
    before = torch.get_num_threads()
    fake = _Timing(torch)
    rows = per_call.measure(torch, crossdev_module, fake, spec, ["gelu_tanh", "modulate", "rotary"])
    assert torch.get_num_threads() == before
    assert set(fake.threads) == {spec.threads}
    names = [name for name, _, _ in rows]
    # gelu_tanh's basic set is [4, 8, 64]; a same-shape op is cut to the data's [2, 8, 64].
    assert names[:len(per_call.IMPLS)] == [f"gelu_tanh/{impl}/float32/2x8x64/cpu/call" for impl in per_call.IMPLS]
    assert "modulate/fused/float32/2x8x64/cpu/call" in names
    assert "rotary/torch.add/float32/2x8x4x32/cpu/call" in names  # other layouts keep their basic set
    assert all(m == "measured" for _, m, _ in rows)


def test_an_impl_that_raises_is_its_figure_and_the_others_are_still_timed(monkeypatch):
    # The impls are timed together (interleaved); one that raises must not take the others' figures along.
    import dataclasses

    import torch
    import timing

    def broken():
        raise RuntimeError("kernel exploded")

    monkeypatch.setattr(per_call, "steps", lambda torch, crossdev, op, spec: ("2x8x64", 1024, {
        "functional": lambda: None, "fused": broken, "torch.add": lambda: None, "aten.add": lambda: None}))
    _, spec = sweep.load(sweep.SWEEP_PATH, peer_impls.FWD_IMPLS)
    spec = dataclasses.replace(spec, repetitions=2, min_time=0.001)
    got = {name.split("/")[1]: m for name, m, _ in per_call.measure(torch, None, timing, spec, ["modulate"])}
    assert got["fused"] == "RuntimeError: kernel exploded"
    assert all(isinstance(got[impl], timing.Measurement) and len(got[impl].reps) == 2
               for impl in ("functional", "torch.add", "aten.add"))


def test_per_call_steps_compute_the_op_on_the_same_tensor(crossdev_module):
    import torch
    _, spec = sweep.load(sweep.SWEEP_PATH, peer_impls.FWD_IMPLS)
    label, elements, steps = per_call.steps(torch, crossdev_module, "modulate", spec)
    assert (label, elements) == ("2x8x64", 2 * 8 * 64)
    out, added, ops_added = steps["fused"](), steps["torch.add"](), steps["aten.add"]()
    assert out.shape == (2, 8, 64) and torch.equal(added, ops_added)


def test_per_call_times_an_op_with_dropout_at_its_call_path_and_its_training_call_beside_it(crossdev_module):
    # The target's figure (functional) is the call at training=False: nothing dropped, the call path alone.
    # functional.train is the op's training call: it drops elements, so a mix-up of the two turns this red.
    import torch
    _, spec = sweep.load(sweep.SWEEP_PATH, peer_impls.FWD_IMPLS)
    label, _, steps = per_call.steps(torch, crossdev_module, "bias_dropout_add_scale", spec)
    assert label == "2x8x64" and per_call.TRAINING_IMPL in steps
    args, kwargs, _ = per_call.op_inputs(torch, crossdev_module, "bias_dropout_add_scale", spec)
    named = dict(zip((a.name for a in torch.ops.crossdev.bias_dropout_add_scale.default._schema.arguments), args))
    named.update(kwargs)
    assert named["training"] is False and named["p"] > 0
    evaluated, trained = steps["functional"](), steps[per_call.TRAINING_IMPL]()
    assert torch.equal(evaluated, steps["fused"]())  # the same call through torch.ops
    kept_all = torch.ops.crossdev.bias_dropout_add_scale(**dict(named, p=0.0, training=True))
    assert evaluated.shape == (2, 8, 64) and torch.equal(evaluated, kept_all)  # nothing dropped
    assert not torch.equal(trained, evaluated)  # training dropped (and rescaled) some elements
    assert per_call.TRAINING_IMPL not in per_call.steps(torch, crossdev_module, "modulate", spec)[2]
