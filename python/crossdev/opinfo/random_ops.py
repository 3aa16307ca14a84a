"""Random ops, found at run time and compared by distribution (docs/opinfo.md, "Random ops").

An OpInfo is random when its call reaches an ATen op tagged `nondeterministic_seeded` (bernoulli_,
rand, randperm, normal_, ...): RandomSeen, a dispatch mode around the CPU golden's run, sees the ATen
ops after autograd and after CompositeImplicitAutograd decompositions, so dropout2d (feature_dropout ->
bernoulli_), fractional_max_pool (rand), svd_lowrank (randn) and multi_head_attention_forward (dropout)
are found, whatever the OpInfo is called. A device's generator need not draw the CPU's numbers
(test_compare_cpu skips these ops: "output is non-deterministic"); crossdev checks them:
- on shape, dtype, layout and device, sample by sample (samples.py);
- by their law where one is known (random_laws.py: every random ATen call the device makes, with enlarged
  draws); otherwise
- by distribution (compare_distributions): DRAWS draws of one sample with elements on each side, each from its
  own seed; each draw is summarised by FEATURES (the mean and the mean square of its finite values, the
  fractions of zeros and of non-finite values); a feature fails when a two-sample Kolmogorov-Smirnov test rejects at
  ALPHA / len(FEATURES) (Bonferroni: at most ALPHA false alarms per case, as far as the asymptotic
  p-value holds) *and* the two sides' quartiles of that feature differ by more than the case's
  tolerance (a rounding-level difference between two near-constant features is not a distribution
  difference). Draws are independent across seeds, whatever the dependence inside one draw
  (dropout2d zeroes whole channels). The measured false-alarm rate is in docs/opinfo.md
  (bench/python/random_false_alarm_bench.py).
A sample whose CPU golden returns the same bits for two seeds did not draw (dropout with p=0,
training=False): its values are compared as any op's (samples.py). op_db pins the seed of its random ops
(wrapper_set_seed: 42 before every call); the second seed and the draws lift the pin (unpinned_seed).
"""
from __future__ import annotations

import contextlib
import math

DRAWS = 32
ALPHA = 1e-3
FEATURES = ("mean", "mean square", "zero fraction", "non-finite fraction")
SEED_BASE = 1_000_003  # the draws' seeds: SEED_BASE + i, away from the samples' own seeds (0, 1, ...)


class RandomSeen:
    """A dispatch mode: `ops` lists the nondeterministic_seeded ATen ops a call reached, `reached` every
    ATen op it reached (crossdev.numerics.TF32_OPS are looked up there)."""

    def __init__(self):
        self.ops = []
        self.reached = set()

    def __enter__(self):
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        ops, reached, tag = self.ops, self.reached, torch.Tag.nondeterministic_seeded

        class _Seen(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = func.overloadpacket.__name__
                reached.add(name)
                if tag in func.tags and name not in ops:
                    ops.append(name)
                return func(*args, **(kwargs or {}))

        self._mode = _Seen()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self._mode.__exit__(*exc)


@contextlib.contextmanager
def unpinned_seed():
    """op_db calls its random ops through torch.testing._utils.wrapper_set_seed, which seeds 42 before every
    call so that a test's two runs agree. Here every draw needs its own seed: for the duration of the
    block, each module of torch.testing._internal that names wrapper_set_seed calls the op as it is."""
    import sys

    def call(op, *args, **kwargs):
        return op(*args, **kwargs)

    patched = [(m, m.wrapper_set_seed) for name, m in list(sys.modules.items())
               if name.startswith(("torch.testing._internal", "torch.testing._utils")) and m is not None
               and callable(getattr(m, "wrapper_set_seed", None))]
    try:
        for module, _ in patched:
            module.wrapper_set_seed = call
        yield
    finally:
        for module, original in patched:
            module.wrapper_set_seed = original


def features(result) -> tuple:
    """FEATURES over every numeric value of a result (tensors, nested): the mean and mean square of the finite
    values, the fractions of zeros and of non-finite values (NaN and inf are counted, never dropped)."""
    from .random_laws import features_with_nonfinite
    return features_with_nonfinite(result)


def ks_statistic(x: list, y: list) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical CDFs."""
    xs, ys = sorted(x), sorted(y)
    i = j = 0
    d = 0.0
    while i < len(xs) and j < len(ys):
        v = min(xs[i], ys[j])
        while i < len(xs) and xs[i] == v:
            i += 1
        while j < len(ys) and ys[j] == v:
            j += 1
        d = max(d, abs(i / len(xs) - j / len(ys)))
    return d


def ks_pvalue(d: float, n: int, m: int) -> float:
    """The asymptotic p-value of the two-sample KS statistic (Kolmogorov's distribution with Stephens'
    small-sample correction, as in Numerical Recipes' probks): conservative for discrete data (ties)."""
    if d <= 0:
        return 1.0
    from .random_laws import kolmogorov_q
    ne = n * m / (n + m)
    return kolmogorov_q((math.sqrt(ne) + 0.12 + 0.11 / math.sqrt(ne)) * d)


def _quartiles(values: list) -> tuple:
    s = sorted(values)
    return tuple(s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))] for q in (0.25, 0.5, 0.75))


def compare_distributions(device_features: list, cpu_features: list, rtol: float, atol: float) -> str:
    """'' when the draws agree in distribution, else what differs (the feature, D, p, the quartiles)."""
    per_test = ALPHA / len(FEATURES)
    for index, name in enumerate(FEATURES):
        dev = [f[index] for f in device_features]
        cpu = [f[index] for f in cpu_features]
        d = ks_statistic(dev, cpu)
        p = ks_pvalue(d, len(dev), len(cpu))
        if p >= per_test:
            continue
        qd, qc = _quartiles(dev), _quartiles(cpu)
        if all(abs(a - b) <= atol + rtol * max(abs(a), abs(b)) for a, b in zip(qd, qc)):
            continue
        return (f"the {name} of {len(dev)} draws differs in distribution from the CPU's (KS D={d:.3g}, p={p:.2g} < "
                f"{per_test:.2g}; quartiles device {', '.join(f'{v:.4g}' for v in qd)}, CPU {', '.join(f'{v:.4g}' for v in qc)})")
    return ""


def draw_features(draw, seed_fn) -> list:
    """DRAWS feature tuples of `draw()`, each after seed_fn(SEED_BASE + i), op_db's pinned seed lifted."""
    out = []
    with unpinned_seed():
        for i in range(DRAWS):
            seed_fn(SEED_BASE + i)
            out.append(features(draw()))
    return out
