"""Google Benchmark's timing scheme in Python, with page faults per call.

measure(step): two untimed warm-up calls (torch.compile compiles in the first), grow the iteration
count until one run lasts min_time, then `repetitions` runs of that many iterations. Each run
records wall time, this thread's CPU time (Google Benchmark's cpu_time) and the process's minor and
major page faults (getrusage, all threads) per call.

The wall clock depends on where the steps run (clock_for): on the CPU, time.perf_counter around
the loop; on a CUDA device, CUDA events recorded on the current stream around the loop, after a
synchronize (earlier work is not counted) and read after another (the loop's kernels have finished),
so an asynchronous launch is not mistaken for the kernel's time.

measure_interleaved(steps): the same, for several steps that are compared with each other (the
per-call figure: one crossdev call against one torch.add). Each is warmed up and calibrated first;
then repetition r runs every step once, in an order rotated by r, so a burst of host noise lands on
all of them alike instead of on whichever step happened to run during it.
"""
import resource
import time
from dataclasses import dataclass
from typing import Callable, Dict, List


@dataclass
class Rep:
    real_s: float      # wall seconds per call
    cpu_s: float       # this thread's CPU seconds per call
    minflt: float      # minor page faults per call
    majflt: float      # major page faults per call


@dataclass
class Measurement:
    iterations: int
    reps: List[Rep]
    first_call_s: float  # the first warm-up call, host wall time (includes torch.compile's compilation)


class HostClock:
    """Wall seconds of a loop on the CPU: time.perf_counter around it."""
    name = "perf_counter"

    def elapsed(self, loop: Callable[[], None]) -> float:
        t0 = time.perf_counter()
        loop()
        return time.perf_counter() - t0


class CudaEventClock:
    """Wall seconds of a loop on a CUDA device: events on the current stream around it, synchronized
    before (nothing queued earlier is counted) and after (every kernel of the loop has finished)."""
    name = "cuda_events"

    def __init__(self, torch):
        self.torch = torch

    def elapsed(self, loop: Callable[[], None]) -> float:
        cuda = self.torch.cuda
        start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        cuda.synchronize()
        start.record()
        loop()
        end.record()
        cuda.synchronize()
        return start.elapsed_time(end) / 1e3  # elapsed_time is in milliseconds


def clock_for(torch, device) -> "HostClock | CudaEventClock":
    """The clock for steps that run on `device` (a torch.device or its string): CUDA events on cuda,
    perf_counter elsewhere (the CPU, where a call returns when its work is done)."""
    kind = torch.device(device).type
    return CudaEventClock(torch) if kind == "cuda" else HostClock()


_HOST = HostClock()


def _run(step: Callable[[], object], iterations: int, clock=_HOST) -> Rep:
    def loop():
        for _ in range(iterations):
            step()
    before = resource.getrusage(resource.RUSAGE_SELF)
    c0 = time.thread_time()
    real = clock.elapsed(loop)
    cpu = time.thread_time() - c0
    after = resource.getrusage(resource.RUSAGE_SELF)
    return Rep(real / iterations, cpu / iterations, (after.ru_minflt - before.ru_minflt) / iterations,
               (after.ru_majflt - before.ru_majflt) / iterations)


def calibrate(step: Callable[[], object], min_time: float, max_iterations: int = 1 << 20, clock=_HOST) -> int:
    iterations = 1
    while True:
        def loop(n=iterations):
            for _ in range(n):
                step()
        elapsed = clock.elapsed(loop)
        if elapsed >= min_time or iterations >= max_iterations:
            return iterations
        iterations = min(max_iterations,
                         max(iterations + 1, int(iterations * min(10.0, 1.4 * min_time / max(elapsed, 1e-9)))))


def measure(step: Callable[[], object], repetitions: int, min_time: float, iterations: int = 0,
            clock=_HOST) -> Measurement:
    """iterations > 0 skips the calibration (the triad's second half reuses the first's count);
    clock: clock_for(torch, device) of the device the step runs on."""
    first = _HOST.elapsed(step)  # the host's time: torch.compile compiles in this call
    step()
    iterations = iterations or calibrate(step, min_time, clock=clock)
    return Measurement(iterations, [_run(step, iterations, clock) for _ in range(repetitions)], first)


def measure_interleaved(steps: Dict[str, Callable[[], object]], repetitions: int, min_time: float,
                        clock=_HOST) -> Dict[str, Measurement]:
    """{name: Measurement} for steps timed in turn: repetition r runs each step once, the order rotated
    by r (host clock or clock_for's, as measure)."""
    names = list(steps)
    firsts, counts = {}, {}
    for name in names:
        firsts[name] = _HOST.elapsed(steps[name])
        steps[name]()
        counts[name] = calibrate(steps[name], min_time, clock=clock)
    reps: Dict[str, List[Rep]] = {name: [] for name in names}
    for r in range(repetitions):
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            reps[name].append(_run(steps[name], counts[name], clock))
    return {name: Measurement(counts[name], reps[name], firsts[name]) for name in names}
