"""bench/python/peer_bench.py --device: where the inputs live and which clock times them.

The clock is chosen from the device (timing.clock_for): perf_counter on the CPU, CUDA events on a
GPU, synchronized before the start event and after the end event. These tests check that choice and
the order of the calls with a stand-in for torch.cuda, and the device plumbing (inputs, outputs and the
triad on the device) with the meta device, which every host has. No timed assertions.
"""
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "python"))
import peer_bench  # noqa: E402
import peer_impls  # noqa: E402
import timing  # noqa: E402


class _FakeCuda:
    """torch.cuda's Event and synchronize, recording the order of the calls."""

    def __init__(self, elapsed_ms):
        self.calls, self.elapsed_ms = [], elapsed_ms
        cuda = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing, "an event without timing cannot be read"
                self.name = "start" if not any(c.startswith("new") for c in cuda.calls) else "end"
                cuda.calls.append(f"new {self.name}")

            def record(self):
                cuda.calls.append(f"record {self.name}")

            def elapsed_time(self, end):
                cuda.calls.append(f"elapsed {self.name}->{end.name}")
                return cuda.elapsed_ms

        self.Event = Event

    def synchronize(self):
        self.calls.append("synchronize")


class _FakeTorch:
    def __init__(self, elapsed_ms=0.0):
        import torch
        self.device = torch.device
        self.cuda = _FakeCuda(elapsed_ms)


def test_the_clock_follows_the_device():
    import torch
    assert isinstance(timing.clock_for(torch, "cpu"), timing.HostClock)
    assert isinstance(timing.clock_for(torch, torch.device("cpu")), timing.HostClock)
    assert isinstance(timing.clock_for(torch, "meta"), timing.HostClock)
    for device in ("cuda", "cuda:1", torch.device("cuda", 0)):
        assert isinstance(timing.clock_for(torch, device), timing.CudaEventClock), device


def test_cuda_events_wrap_the_loop_between_two_synchronizes():
    fake = _FakeTorch(elapsed_ms=250.0)
    clock = timing.clock_for(fake, "cuda")
    seconds = clock.elapsed(lambda: fake.cuda.calls.append("loop"))
    assert seconds == 0.25  # elapsed_time is in milliseconds
    calls = [c for c in fake.cuda.calls if not c.startswith("new")]
    assert calls == ["synchronize", "record start", "loop", "record end", "synchronize", "elapsed start->end"]


def test_measure_times_every_run_with_the_given_clock():
    class CountingClock:
        name = "counting"

        def __init__(self):
            self.loops = 0

        def elapsed(self, loop):
            self.loops += 1
            loop()
            return 1.0  # every loop "lasts" one second: calibration stops at once

    clock, calls = CountingClock(), []
    m = timing.measure(lambda: calls.append(1), repetitions=3, min_time=0.5, clock=clock)
    assert m.iterations == 1
    assert clock.loops == 1 + 3  # calibration, then each repetition (the first call is the host's)
    assert [r.real_s for r in m.reps] == [1.0, 1.0, 1.0]
    assert len(calls) == 2 + 1 + 3  # two warm-up calls, calibration, repetitions


def test_interleaved_repetitions_run_every_step_in_a_rotated_order():
    # The per-call figure compares steps with each other: each repetition runs all of them, in an order
    # rotated by the repetition, so no step always runs first (or alone during a burst of host noise).
    class OneSecondClock:
        name = "one second"

        def elapsed(self, loop):
            loop()
            return 1.0  # calibration stops at one iteration

    order = []
    steps = {name: (lambda name=name: order.append(name)) for name in "abc"}
    measured = timing.measure_interleaved(steps, repetitions=3, min_time=0.5, clock=OneSecondClock())
    assert order[:9] == list("aaabbbccc")  # per step: the host-timed first call, a warm-up, calibration
    assert order[9:] == list("abc" "bca" "cab")
    assert all(m.iterations == 1 and [r.real_s for r in m.reps] == [1.0] * 3 for m in measured.values())


def test_device_option_names_the_results_and_keeps_per_call_on_the_host():
    assert [peer_bench.device_kind(d) for d in ("cpu", "cuda", "cuda:3")] == ["cpu", "cuda", "cuda"]
    assert [peer_bench.device_kind(d) for d in ("cpu:0", "mps", "cuda:x", "")] == [None] * 4
    assert peer_bench.parse_args([]).parts == list(peer_bench.PARTS)
    assert peer_bench.parse_args(["--device", "cuda"]).parts == list(peer_bench.GPU_PARTS)
    assert peer_bench.name_of("modulate", "fused", "float32", "1M", "fwd", "cuda") == "modulate/fused/float32/1M/cuda/fwd"
    for bad in (["--device", "cuda", "--parts", "per_call"], ["--device", "tpu"]):
        with pytest.raises(SystemExit) as exc:
            peer_bench.parse_args(bad)
        assert exc.value.code == 2, bad


def test_cases_are_picked_by_the_device(tmp_path):
    matrix = tmp_path / "bench.yaml"
    matrix.write_text("suite: bench\ncases:\n"
                      "  - {id: a, source: s, kind: op, op: gelu_tanh, sizes: [1M], passes: [fwd], devices: [cuda]}\n"
                      "  - {id: b, source: s, kind: op, op: modulate, sizes: [1M], passes: [fwd], devices: [cpu]}\n"
                      "  - {id: c, source: s, kind: op, op: swiglu, sizes: [1M], passes: [fwd]}\n")
    assert [c.op for c in peer_bench.load_cases(matrix, "default", "cuda")] == ["gelu_tanh", "swiglu"]
    assert [c.op for c in peer_bench.load_cases(matrix, "default")] == ["modulate", "swiglu"]


def test_inputs_outputs_and_triad_live_on_the_device(crossdev_module):
    import torch
    if not hasattr(crossdev_module, "bench"):
        pytest.skip("crossdev was built without crossdev.bench (CROSSDEV_BUILD_BENCH=OFF)")
    on_cpu = peer_impls.CaseInputs(torch, crossdev_module, "modulate", 4096, "float32", 0, "fwd")
    on_meta = peer_impls.CaseInputs(torch, crossdev_module, "modulate", 4096, "float32", 0, "fwd", "meta")
    assert on_cpu.device == torch.device("cpu") and on_meta.device == torch.device("meta")
    assert {t.device.type for t in on_cpu.tensors.values()} == {"cpu"}
    assert {t.device.type for t in on_meta.tensors.values()} == {"meta"}
    assert on_meta.out.device.type == "meta" and on_meta.out.shape == on_cpu.out.shape
    assert {n: t.shape for n, t in on_meta.tensors.items()} == {n: t.shape for n, t in on_cpu.tensors.items()}
    steps, _ = peer_impls.build_steps(on_meta, {}, {}, ["fused.out", "fused"], compile_enabled=False)
    assert steps["fused"]().device.type == "meta"
    triad = peer_bench.Triad(torch, 1024, torch.device("meta"))
    assert {t.device.type for t in (triad.a, triad.b, triad.c)} == {"meta"}


@pytest.mark.skipif("__import__('torch').cuda.is_available()", reason="this host has a CUDA device")
def test_a_cuda_run_without_a_gpu_is_refused(tmp_path, build_dir):
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "python" / "peer_bench.py"), "--device", "cuda",
                           "--build-dir", str(build_dir), "--out", str(tmp_path / "o.json"), "--no-compile"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "sees no CUDA device" in proc.stderr, proc.stderr
