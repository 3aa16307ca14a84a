"""crossdev.bench: the benchmark inputs and memory-traffic model of crossdev_bench for Python (the
torch.compile peer, bench/python/peer_bench.py): make_inputs, grad_inputs, layouts, traffic.

Its compiled half, ``crossdev._bench``, is a module of its own, built only with the benchmarks
(CROSSDEV_BUILD_BENCH=ON; the wheel leaves them out), so the core extension does not depend on bench/.
Importing this module without it raises ImportError saying so."""
import torch  # noqa: F401  (before the extension: LibTorch and torch's pybind11 casters)

try:
    from crossdev._bench import grad_inputs, layouts, make_inputs, traffic  # noqa: F401
except ImportError as e:  # built without the benchmarks
    raise ImportError("crossdev.bench: this crossdev was built without the benchmarks (crossdev._bench); "
                      "configure with CROSSDEV_BUILD_BENCH=ON") from e

__all__ = ["grad_inputs", "layouts", "make_inputs", "traffic"]
