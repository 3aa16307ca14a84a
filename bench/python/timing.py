"""Google Benchmark's timing scheme in Python, with page faults per call.

measure(step): two untimed warm-up calls (torch.compile compiles in the first), grow the iteration
count until one run lasts min_time, then `repetitions` runs of that many iterations. Each run
records wall time, this thread's CPU time (Google Benchmark's cpu_time) and the process's minor and
major page faults (getrusage, all threads) per call.
"""
import resource
import time
from dataclasses import dataclass
from typing import Callable, List


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
    first_call_s: float  # the first warm-up call (includes torch.compile's compilation)


def _run(step: Callable[[], object], iterations: int) -> Rep:
    before = resource.getrusage(resource.RUSAGE_SELF)
    c0, t0 = time.thread_time(), time.perf_counter()
    for _ in range(iterations):
        step()
    real, cpu = time.perf_counter() - t0, time.thread_time() - c0
    after = resource.getrusage(resource.RUSAGE_SELF)
    return Rep(real / iterations, cpu / iterations, (after.ru_minflt - before.ru_minflt) / iterations,
               (after.ru_majflt - before.ru_majflt) / iterations)


def calibrate(step: Callable[[], object], min_time: float, max_iterations: int = 1 << 20) -> int:
    iterations = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(iterations):
            step()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time or iterations >= max_iterations:
            return iterations
        iterations = min(max_iterations,
                         max(iterations + 1, int(iterations * min(10.0, 1.4 * min_time / max(elapsed, 1e-9)))))


def measure(step: Callable[[], object], repetitions: int, min_time: float, iterations: int = 0) -> Measurement:
    """iterations > 0 skips the calibration (the triad's second half reuses the first's count)."""
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    step()
    iterations = iterations or calibrate(step, min_time)
    return Measurement(iterations, [_run(step, iterations) for _ in range(repetitions)], first)
