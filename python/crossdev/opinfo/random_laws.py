"""Random ops judged by their contract (docs/opinfo.md, "Random ops").

A random op's values cannot be compared with the CPU's element by element, but its ATen op and arguments
fix the law they follow: uniform_(from, to) draws iid U(from, to), bernoulli(p) draws 1 with probability
p[i] at element i, native_dropout(x, p, train) keeps each element with probability 1-p and scales it by
1/(1-p). One record per ATen random op (LAWS, keyed by the overload packet's name) says all about it: how to
read the law's parameters from a recorded call (per element where a parameter is a tensor), its CDF, which
output it governs, the values it must never take, when the call is deterministic (then its values are
compared as any op's: `Verdict.kind == "deterministic"`), and how to draw a large sample on the same device
by calling the same ATen overload again with its arguments enlarged (a fill of DRAW_VALUES elements with the
same scalars; tensor parameters tiled along a new leading dimension until the output has DRAW_VALUES
values; randperm called again).

What is compared, for each recorded call (RandomCalls, a dispatch mode, records every call of an ATen op
tagged nondeterministic_seeded on any device) that has a law (law_for), by judge:
- the recorded values and those of the two enlarged draws must lie in the law's support (uniform in
  [from, to] (`to` is reached by rounding only), exponential and log_normal >= 0, geometric a positive
  integer, randint in [low, high), bernoulli in {0, 1}, randperm a permutation, multinomial an index of
  positive probability, and not repeated without replacement); NaN is never a value, +-inf only where the
  law puts mass >= INF_MASS beyond the dtype's largest finite value (cauchy in float16); native_dropout's
  kept values must equal x/(1-p) and its dropped ones 0, rrelu_with_noise's output x*noise with noise 1 for
  x > 0 (within rtol/atol: by default 2 eps of the dtype and its smallest normal). Each failure says how
  many values;
- goodness of fit, one test for every law: the probability integral transform u = F(x) of the first draw's
  values, randomized for discrete laws (u = F(x-) + V (F(x) - F(x-)), V ~ U(0, 1) from a private generator
  seeded by PIT_SEED and a hash of the values: same values, same verdict) and sequential for the laws of
  several dependent values (multinomial without replacement, randperm: the conditional law of each value
  given the earlier ones, the Rosenblatt transform), so that u ~ U(0, 1) iid exactly under the law; a
  one-sample Kolmogorov-Smirnov test of the u's (asymptotic p-value with Stephens' correction) rejects when
  D exceeds the critical value at alpha/2 plus an allowance for the dtype's rounding: the largest CDF mass
  of one quantization step among the values drawn (F(x + ulp/2) - F(x - ulp/2)), and at least 2**-digits
  (PyTorch's uniform for float16/bfloat16 draws the dtype's digits only). For float32/float64 it is
  negligible; for bfloat16 it is 2**-8;
- a repeat check: the two enlarged draws (no reseeding in between) must differ. Identical draws fail when
  their coincidence has probability < alpha/2 under the law (the product of each value's probability, a
  quantization step's mass for continuous laws): a law with a single outcome is never flagged.
judge_case splits ALPHA (1e-4 per case) over the first MAX_CALLS_PER_CASE distinct recorded calls (op and
parameters) that draw (Bonferroni), so a correct op fails a case with probability <= ALPHA, far under
the 1e-3 the suite promises, even with several recorded calls per case. A call without a law falls back to
random_ops.py's two-sample test (features_with_nonfinite gives it the fraction of non-finite values).

Power. At DRAW_VALUES = 1e5 values and alpha = 5e-5 per test (one call in the case) the KS critical value is
D = 0.0073 (float32): a law whose CDF is off by about 0.01 somewhere is found almost surely, one off by
0.005 rarely (a normal's std x1.03 moves its CDF by up to 0.0071, a Cauchy's sigma x1.03 by 0.0047).
Values outside the support, NaN, wrong dropout/rrelu values and repeated draws fail whatever their number.

Measured (torch 2.13 CPU, one intra-op thread, a 2-core host) with bench/python/random_false_alarm_bench.py:
one representative call of each of the 22 op_db random ops judged by a law (cauchy, exponential, geometric,
log_normal, normal.in_place, uniform, randn, randn_like, rand_like, randint, randint_like, multinomial,
normal, normal.number_mean, bernoulli, nn.functional.dropout, dropout2d, dropout3d, alpha_dropout,
feature_alpha_dropout, rrelu; plus native_dropout, which CUDA's dropout reaches), recorded on the CPU and
judged as the suite judges a case; the wrong kernels are a dispatch mode that moves one parameter of the law
by the error (from/to inwards by that fraction of the range, mean + error * std, std, sigma, rate
x(1 + error), p + error * min(p, 1 - p), dropout's p x(1 + error), randint's low/high by one, ...):

    python bench/python/random_false_alarm_bench.py --reruns 200 --out random_laws.json
      false alarms (PyTorch's CPU kernels): 0 in 4400 cases (200 per op); 10% errors: 1400 of 1400 detected
      (40 per parameter, 35 parameters: every rate 1.0); 2.9 min
    python bench/python/random_false_alarm_bench.py --reruns 1000 --mutant-reruns 0 --seed 7000003
      false alarms: 1 in 22000 cases (normal.number_mean, KS p = 2.3e-5), 4.5e-5 per case against the bound
      of 1e-4 (with one fixed V for every draw instead of V seeded by the values, bernoulli had 2 in 1000)
    python bench/python/random_false_alarm_bench.py --reruns 0 --mutant-reruns 40 --error 0.03
      3% errors: 1343 of 1400 detected: every parameter >= 38/40 but bernoulli's p (27/40; p + 0.03 min(p,
      1 - p) over p in (0, 1) moves the CDF by 0.006) and cauchy's sigma (3/40)
    python bench/python/random_false_alarm_bench.py --reruns 0 --mutant-reruns 40 --error 0.01
      1% errors: 531 of 1400: every one that moves the support (uniform's and rand_like's from/to, randint's
      low/high, rrelu's lower/upper) or a value (native_dropout's scale), few of the others (0 to 8 of 40;
      multinomial 32/40)
    float16 and bfloat16 (uniform, normal_, randn, rand_like, cauchy, exponential, log_normal, geometric,
      normal, rrelu, randint_like; 100 reruns each, a one-off script): 0 false alarms in 2900 cases
The statistics of one call cost about 30 ms of CPU (the sort of 1e5 values dominates).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

DRAW_VALUES = 100_000  # values drawn per enlarged draw (at least: tiling rounds up)
ALPHA = 1e-4  # false alarms per case, split over its tests
MAX_CALLS_PER_CASE = 4  # distinct recorded calls judged per case
MAX_TILED_ELEMENTS = 20_000_000  # cap on the elements of an enlarged call's tensor arguments
MAX_REDRAW_CALLS = 20_000  # randperm: calls per draw
PERM_WINDOW = 128  # randperm: the positions judged, the first and the last PERM_WINDOW of each permutation
INF_MASS = 1e-12  # +-inf is a value of the law only where it has this much mass beyond the largest finite
PIT_SEED = 20_261_127  # the private generator of the randomized PIT
DETERMINISTIC = "deterministic"  # Verdict.kind of a call whose values are compared as any op's


# ---------------------------------------------------------------------------------------------------------
# Recorded calls


@dataclass
class RandomCall:
    """One call of a nondeterministic_seeded ATen op: `args`/`kwargs` as it received them (tensors cloned
    before the call), `outputs` (tensors cloned after it) and `written`: the inputs it overwrote, by schema
    name, as they were after the call (rrelu_with_noise's noise)."""
    op: object  # torch._ops.OpOverload
    args: tuple
    kwargs: dict
    outputs: tuple
    written: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.op.overloadpacket.__name__


class RandomCalls:
    """A dispatch mode: `calls` lists every call of an ATen op tagged nondeterministic_seeded (RandomCall),
    on whatever device; the tensors stay there. Judge them after the block (judge draws again)."""

    def __init__(self):
        self.calls: list[RandomCall] = []

    @property
    def ops(self) -> list[str]:
        return list(dict.fromkeys(c.name for c in self.calls))

    def __enter__(self):
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        calls, tag = self.calls, torch.Tag.nondeterministic_seeded

        class _Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if tag not in func.tags:
                    return func(*args, **kwargs)
                call, result = _run(func, args, kwargs, clone_all=True)
                calls.append(call)
                return result

        self._mode = _Record()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self._mode.__exit__(*exc)


def _run(func, args: tuple, kwargs: dict, clone_all: bool):
    """Call func, recording it: (RandomCall, what func returned). Inputs it writes are cloned before the
    call (all tensors when clone_all: a later in-place op must not change the record)."""
    import torch
    from torch.utils._pytree import tree_flatten, tree_map

    written_names = [a.name for a in func._schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    bound = bind(func, args, kwargs)
    written_ids = {id(bound[n]) for n in written_names if isinstance(bound.get(n), torch.Tensor)}

    def snap(v):
        if isinstance(v, torch.Tensor) and (clone_all or id(v) in written_ids):
            return v.detach().clone()
        return v

    pre_args, pre_kwargs = tree_map(snap, (tuple(args), dict(kwargs)))
    result = func(*args, **kwargs)
    flat = tree_flatten(result)[0]
    clones = {}

    def after(v):
        if not isinstance(v, torch.Tensor):
            return v
        if id(v) not in clones:
            clones[id(v)] = v.detach().clone()
        return clones[id(v)]

    outputs = tuple(after(v) for v in flat)
    written = {n: after(bound[n]) for n in written_names if isinstance(bound.get(n), torch.Tensor)}
    return RandomCall(func, pre_args, pre_kwargs, outputs, written), result


def bind(op, args: tuple, kwargs: dict) -> dict:
    """The call's arguments by schema name, defaults filled in."""
    out = {}
    for i, a in enumerate(op._schema.arguments):
        if not a.kwarg_only and i < len(args):
            out[a.name] = args[i]
        elif a.name in kwargs:
            out[a.name] = kwargs[a.name]
        else:
            has_default = getattr(a, "has_default_value", lambda: a.default_value is not None)()
            out[a.name] = a.default_value if has_default else None
    return out


def _replaced(op, args: tuple, kwargs: dict, changes: dict) -> tuple:
    """(args, kwargs) with the named arguments replaced (no default of the schema leaks into the call)."""
    args, kwargs = list(args), dict(kwargs)
    for i, a in enumerate(op._schema.arguments):
        if a.name not in changes:
            continue
        if not a.kwarg_only and i < len(args):
            args[i] = changes[a.name]
        else:
            kwargs[a.name] = changes[a.name]
    return tuple(args), kwargs


# ---------------------------------------------------------------------------------------------------------
# Laws


@dataclass
class Observed:
    """The values a law governs, float64 on the CPU, flattened, with its parameters aligned to them (a float,
    or a tensor of one value per element). `bounds`: (F(x-), F(x)) where the law computes them itself
    (sequential laws); `problems`: what the call broke that is not a matter of distribution."""
    x: object  # torch.Tensor
    dtype: object  # torch.dtype of the governed values (their rounding)
    params: dict
    problems: list = field(default_factory=list)
    bounds: Optional[tuple] = None


@dataclass(frozen=True)
class Law:
    """All about one ATen random op. `observe(bound, outputs, written, tol)` -> Observed; `cdf(obs, t)`: F at t
    (aligned with obs.x); `support(obs)`: a continuous law's in-support mask (a discrete law's support is
    where its mass is); `enlarge(bound, n)` -> (the arguments to change, calls) so that the call draws >= n
    values; `deterministic(bound)`: why the call draws nothing, or ''; `describe(bound)`: its parameters."""
    name: str
    discrete: bool
    observe: Callable
    cdf: Callable
    enlarge: Callable
    describe: Callable
    deterministic: Callable = lambda bound: ""
    support: Optional[Callable] = None
    overloads: Optional[tuple] = None  # None: every overload of the packet


def _torch():
    import torch
    return torch


def _num(v) -> float:
    return float(v.item()) if isinstance(v, _torch().Tensor) else float(v)


def _is_tensor(v) -> bool:
    return isinstance(v, _torch().Tensor)


def _cpu64(t):
    return t.detach().to("cpu").to(_torch().float64)


def _real_dtype(dtype):
    torch = _torch()
    return {torch.complex32: torch.float16, torch.complex64: torch.float32,
            torch.complex128: torch.float64}.get(dtype, dtype)


def _elementwise(out, complex_scale: float = 1.0, **params) -> Observed:
    """The values of `out` (a complex one as its real and imaginary parts) with each parameter broadcast
    to them; complex_scale multiplies the parameters named scale* of a complex output."""
    torch = _torch()
    t = out.detach()
    shape, is_complex = tuple(t.shape), t.is_complex()
    if is_complex:
        t = torch.view_as_real(t)
    x = _cpu64(t).reshape(-1)

    def aligned(name, v):
        if not _is_tensor(v):
            return float(v) * (complex_scale if is_complex and name.startswith("scale") else 1.0)
        v = _cpu64(v).broadcast_to(shape)
        if is_complex:
            v = v.unsqueeze(-1).expand(*shape, 2) * (complex_scale if name.startswith("scale") else 1.0)
        return v.reshape(-1)

    return Observed(x, _real_dtype(t.dtype), {k: aligned(k, v) for k, v in params.items()})


def _numel(shape) -> int:
    return int(math.prod(shape))


def _fill(bound: dict, n: int, name: str = "self") -> tuple:
    """A scalar-parameter fill or *_like op: a new `name` of n elements (same dtype, device)."""
    torch = _torch()
    t = bound[name]
    changes = {name: torch.empty(n, dtype=t.dtype, device=t.device)}
    if bound.get("memory_format") is not None:
        changes["memory_format"] = torch.preserve_format
    return changes, 1


def _sized(bound: dict, n: int) -> tuple:
    """A factory (rand, randn, randint, normal.float_float): size [n]."""
    changes = {"size": [n]}
    if bound.get("names") is not None:
        changes["names"] = None
    return changes, 1


def _repeats(per_copy: int, input_elements: int, n: int) -> int:
    cap = max(1, MAX_TILED_ELEMENTS // max(1, input_elements))
    return max(1, min(math.ceil(n / max(1, per_copy)), cap))


def _tile(t, shape: tuple, r: int):
    """t broadcast to shape, repeated r times along a new leading dimension (contiguous), on t's device. Tiled on
    the CPU: a parameter, not what is judged (a backend without a `repeat` of its own, sim among them, would warn
    that its view `unfold` falls back to the CPU)."""
    tiled = t.detach().to("cpu").expand(shape).reshape(1, *shape).repeat(r, *([1] * len(shape)))
    return tiled.to(t.device).requires_grad_(t.requires_grad) if t.requires_grad else tiled.to(t.device)


def _empty_tiled(t, r: int):
    return _torch().empty((r, *t.shape), dtype=t.dtype, device=t.device)


def _tensor_summary(v) -> str:
    if not _is_tensor(v):
        return f"{_num(v):.6g}"
    if v.numel() == 0:
        return "an empty tensor"
    c = _cpu64(v)
    if v.numel() == 1:
        return f"{float(c.reshape(-1)[0]):.6g}"
    return f"{v.numel()} values in [{float(c.min()):.4g}, {float(c.max()):.4g}]"


# --- continuous CDFs (t: float64 tensor aligned with obs.x) ---


def _uniform_cdf(obs: Observed, t):
    a, b = obs.params["a"], obs.params["b"]
    return ((t - a) / (b - a)).clamp(0.0, 1.0)


def _uniform_support(obs: Observed):
    return (obs.x >= obs.params["a_rounded"]) & (obs.x <= obs.params["b_rounded"])


def _normal_cdf(obs: Observed, t):
    torch = _torch()
    return 0.5 * torch.erfc(-(t - obs.params["loc"]) / (obs.params["scale"] * math.sqrt(2.0)))


def _cauchy_cdf(obs: Observed, t):
    torch = _torch()
    return 0.5 + torch.atan((t - obs.params["loc"]) / obs.params["scale"]) / math.pi


def _exponential_cdf(obs: Observed, t):
    torch = _torch()
    return torch.where(t > 0, -torch.expm1(-obs.params["rate"] * t.clamp(min=0.0)), torch.zeros_like(t))


def _log_normal_cdf(obs: Observed, t):
    torch = _torch()
    z = (torch.log(t.clamp(min=0.0)) - obs.params["loc"]) / (obs.params["scale"] * math.sqrt(2.0))
    return torch.where(t > 0, 0.5 * torch.erfc(-z), torch.zeros_like(t))


def _gamma_cdf(obs: Observed, t):
    torch = _torch()
    return torch.special.gammainc(obs.params["shape"], t.clamp(min=0.0))


def _nonnegative(obs: Observed):
    return obs.x >= 0


# --- discrete CDFs (t: integer-valued float64, possibly +-inf) ---


def _bernoulli_cdf(obs: Observed, t):
    torch = _torch()
    p = obs.params["p"]
    zero = torch.zeros_like(t)
    return torch.where(t < 0, zero, torch.where(t < 1, (1.0 - p) + zero, zero + 1.0))


def _geometric_cdf(obs: Observed, t):
    torch = _torch()
    k = t.clamp(min=0.0)
    p = obs.params["p"]  # a float: geometric_ has a scalar p
    log_q = math.log1p(-p) if p < 1 else -math.inf
    f = -torch.expm1(torch.where(k > 0, k * log_q, torch.zeros_like(k)))
    return torch.where(t < 1, torch.zeros_like(t), f)


def _randint_cdf(obs: Observed, t):
    low, high = obs.params["low"], obs.params["high"]
    return ((t - low + 1.0) / (high - low)).clamp(0.0, 1.0)


def _poisson_cdf(obs: Observed, t):
    torch = _torch()
    k = t.clamp(min=0.0, max=1e15)
    rate = obs.params["rate"]
    rate = rate if _is_tensor(rate) else torch.full_like(k, rate)
    return torch.where(t < 0, torch.zeros_like(t), torch.special.gammaincc(k + 1.0, rate))


def _rank_cdf(obs: Observed, t):
    """randperm: the rank of a value among the m values left, uniform on {0..m-1}."""
    return ((t + 1.0) / obs.params["m"]).clamp(0.0, 1.0)


def _unused_cdf(obs: Observed, t):  # a law that computes its own bounds
    raise AssertionError("bounds are computed by observe")


# --- the records ---


def _out(outputs):
    return outputs[0]


def _scalar_law(name: str, cdf, params: Callable, *, support=None, discrete=False, complex_scale=1.0,
                deterministic=lambda b: "", enlarge=_fill, overloads=None, labels=None) -> Law:
    """A law whose parameters are the call's scalars (fills, factories): `params(bound)` -> {name: float}."""

    def observe(bound, outputs, written, tol):
        p = params(bound)
        obs = _elementwise(_out(outputs), complex_scale, **p)
        _rounded_bounds(obs)
        return obs

    def describe(bound):
        shown = labels or {}
        return f"{name}({', '.join(f'{shown.get(k, k)}={v:.6g}' for k, v in params(bound).items())})"

    return Law(name, discrete, observe, cdf, enlarge, describe, deterministic, support, overloads)


def _rounded_bounds(obs: Observed) -> None:
    """uniform's from/to as the dtype rounds them (a value may be rounded onto or past the double bound)."""
    torch = _torch()
    if "a" in obs.params and obs.dtype.is_floating_point:
        a, b = obs.params["a"], obs.params["b"]
        ar, br = (float(torch.tensor(v, dtype=torch.float64).to(obs.dtype)) for v in (a, b))
        obs.params["a_rounded"], obs.params["b_rounded"] = min(a, ar), max(b, br)
    elif "a" in obs.params:
        obs.params["a_rounded"], obs.params["b_rounded"] = obs.params["a"], obs.params["b"]


def _uniform_params(bound):
    return {"a": _num(bound["from"]), "b": _num(bound["to"])}


def _normal_scalar_params(bound):
    return {"loc": _num(bound["mean"]), "scale": _num(bound["std"])}


def _no_element(bound, name="self") -> str:
    return "the call has no element to draw" if bound[name].numel() == 0 else ""


def _uniform_deterministic(bound) -> str:
    return _no_element(bound) or ("from == to" if _num(bound["from"]) == _num(bound["to"]) else "")


def _normal_fill_deterministic(bound) -> str:
    return _no_element(bound) or ("std == 0" if _num(bound["std"]) == 0 else "")


def _size_deterministic(bound) -> str:
    return "the call has no element to draw" if _numel(bound["size"]) == 0 else ""


def _randint_params(bound):
    low = bound.get("low")
    return {"low": float(low) if low is not None else 0.0, "high": _num(bound["high"])}


def _randint_deterministic(bound) -> str:
    p = _randint_params(bound)
    empty = _numel(bound["size"]) == 0 if "size" in bound else bound["self"].numel() == 0
    return "the call has no element to draw" if empty else ("high - low == 1" if p["high"] - p["low"] == 1 else "")


_SQRT_HALF = math.sqrt(0.5)
_UNIFORM_LABELS = {"a": "from", "b": "to"}
_NORMAL_LABELS = {"loc": "mean", "scale": "std"}

UNIFORM = _scalar_law("U", _uniform_cdf, _uniform_params, support=_uniform_support, labels=_UNIFORM_LABELS,
                      deterministic=_uniform_deterministic)
RAND = _scalar_law("U", _uniform_cdf, lambda b: {"a": 0.0, "b": 1.0}, support=_uniform_support, enlarge=_sized,
                   labels=_UNIFORM_LABELS,
                   deterministic=_size_deterministic)
RAND_LIKE = _scalar_law("U", _uniform_cdf, lambda b: {"a": 0.0, "b": 1.0}, support=_uniform_support,
                        labels=_UNIFORM_LABELS,
                        deterministic=_no_element)
NORMAL_FILL = _scalar_law("N", _normal_cdf, _normal_scalar_params, complex_scale=_SQRT_HALF, labels=_NORMAL_LABELS,
                          deterministic=_normal_fill_deterministic)
RANDN = _scalar_law("N", _normal_cdf, lambda b: {"loc": 0.0, "scale": 1.0}, complex_scale=_SQRT_HALF,
                    labels=_NORMAL_LABELS,
                    enlarge=_sized, deterministic=_size_deterministic)
RANDN_LIKE = _scalar_law("N", _normal_cdf, lambda b: {"loc": 0.0, "scale": 1.0}, complex_scale=_SQRT_HALF,
                         labels=_NORMAL_LABELS,
                         deterministic=_no_element)
CAUCHY = _scalar_law("Cauchy", _cauchy_cdf, lambda b: {"loc": _num(b["median"]), "scale": _num(b["sigma"])},
                     deterministic=_no_element, labels={"loc": "median", "scale": "sigma"})
EXPONENTIAL = _scalar_law("Exp", _exponential_cdf, lambda b: {"rate": _num(b["lambd"])}, support=_nonnegative,
                          deterministic=_no_element, labels={"rate": "lambd"})
LOG_NORMAL = _scalar_law("LogN", _log_normal_cdf, _normal_scalar_params, support=_nonnegative,
                         deterministic=_no_element, labels=_NORMAL_LABELS)
GEOMETRIC = _scalar_law("Geom", _geometric_cdf, lambda b: {"p": _num(b["p"])}, discrete=True,
                        deterministic=lambda b: _no_element(b) or ("p == 1" if _num(b["p"]) == 1 else ""))
RANDINT = _scalar_law("UniformInt", _randint_cdf, _randint_params, discrete=True, enlarge=_sized,
                      deterministic=_randint_deterministic)
RANDINT_LIKE = _scalar_law("UniformInt", _randint_cdf, _randint_params, discrete=True,
                           deterministic=_randint_deterministic)


# bernoulli: p a scalar (bernoulli_.float, bernoulli.p), a tensor (bernoulli_.Tensor, bernoulli.Tensor) or
# the input itself (bernoulli.default)


def _bernoulli_p(bound):
    return bound["self"] if "p" not in bound else bound["p"]


def _bernoulli_observe(bound, outputs, written, tol):
    return _elementwise(_out(outputs), p=_bernoulli_p(bound))


def _bernoulli_enlarge(bound, n):
    p, self = _bernoulli_p(bound), bound["self"]
    if "p" in bound and not _is_tensor(p):
        return _fill(bound, n)
    shape = tuple(self.shape)
    r = _repeats(_numel(shape), 2 * _numel(shape), n)
    if "p" not in bound:  # bernoulli.default: self is p
        return {"self": _tile(self, shape, r)}, 1
    return {"self": _empty_tiled(self, r), "p": _tile(p, shape, r)}, 1


def _bernoulli_deterministic(bound) -> str:
    if bound["self"].numel() == 0:
        return "the call has no element to draw"
    p = _bernoulli_p(bound)
    if not _is_tensor(p):
        return f"p == {_num(p):g}" if _num(p) in (0.0, 1.0) else ""
    c = _cpu64(p)
    return "p is 0 or 1 everywhere" if bool(((c == 0) | (c == 1)).all()) else ""


BERNOULLI = Law("Bernoulli", True, _bernoulli_observe, _bernoulli_cdf, _bernoulli_enlarge,
                lambda b: f"Bernoulli(p={_tensor_summary(_bernoulli_p(b))})", _bernoulli_deterministic)


# normal: mean and std each a float or a tensor (normal.Tensor_Tensor, Tensor_float, float_Tensor,
# float_float); elements with std == 0 are point masses, checked for equality and left out of the fit


def _normal_observe(bound, outputs, written, tol):
    torch = _torch()
    obs = _elementwise(_out(outputs), _SQRT_HALF, loc=bound["mean"], scale=bound["std"])
    scale = obs.params["scale"]
    if _is_tensor(scale) and bool((scale == 0).any()):
        fixed = scale == 0
        loc = obs.params["loc"]
        loc_fixed = loc[fixed] if _is_tensor(loc) else torch.full((int(fixed.sum()),), loc, dtype=torch.float64)
        wrong = int((obs.x[fixed] != loc_fixed).sum())
        if wrong:
            obs.problems.append(f"{wrong} of {int(fixed.sum())} values with std 0 differ from their mean")
        keep = ~fixed
        obs.x = obs.x[keep]
        obs.params = {k: (v[keep] if _is_tensor(v) else v) for k, v in obs.params.items()}
    return obs


def _normal_enlarge(bound, n):
    torch = _torch()
    mean, std = bound["mean"], bound["std"]
    tensors = {k: v for k, v in (("mean", mean), ("std", std)) if _is_tensor(v)}
    if not tensors:
        return _sized(bound, n)
    shape = tuple(torch.broadcast_shapes(*(t.shape for t in tensors.values())))
    r = _repeats(_numel(shape), len(tensors) * _numel(shape), n)
    return {k: _tile(v, shape, r) for k, v in tensors.items()}, 1


def _normal_deterministic(bound) -> str:
    mean, std = bound["mean"], bound["std"]
    if "size" in bound and not _is_tensor(mean) and not _is_tensor(std):
        return _size_deterministic(bound) or ("std == 0" if _num(std) == 0 else "")
    if any(_is_tensor(v) and v.numel() == 0 for v in (mean, std)):
        return "the call has no element to draw"
    zero = bool((_cpu64(std) == 0).all()) if _is_tensor(std) else _num(std) == 0
    return "std == 0 everywhere" if zero else ""


NORMAL = Law("N", False, _normal_observe, _normal_cdf, _normal_enlarge,
             lambda b: f"N(mean={_tensor_summary(b['mean'])}, std={_tensor_summary(b['std'])})",
             _normal_deterministic)


# multinomial(probs, num_samples, replacement): each row's samples iid categorical, or, without replacement,
# each given the earlier ones categorical over the categories not drawn yet (bounds computed sequentially)


def _multinomial_observe(bound, outputs, written, tol):
    torch = _torch()
    probs = _cpu64(bound["self"])
    probs = probs.reshape(1, -1) if probs.dim() == 1 else probs
    x = _out(outputs).detach().to("cpu").to(torch.int64).reshape(probs.shape[0], -1)
    k = probs.shape[1]
    bad = (x < 0) | (x >= k)
    idx = x.clamp(0, k - 1)
    lo, hi = torch.zeros(x.shape, dtype=torch.float64), torch.zeros(x.shape, dtype=torch.float64)
    weights = probs.clone()
    replacement = bool(bound["replacement"])
    for j in range(x.shape[1]):
        total = weights.sum(dim=1, keepdim=True)
        cum = torch.cumsum(weights, dim=1) / total
        col = idx[:, j:j + 1]
        mass = weights.gather(1, col) / total
        hi[:, j:j + 1] = cum.gather(1, col)
        lo[:, j:j + 1] = hi[:, j:j + 1] - mass
        if not replacement:
            weights = weights.scatter(1, col, 0.0)
    lo, hi = torch.where(bad, torch.zeros_like(lo), lo), torch.where(bad, torch.zeros_like(hi), hi)
    return Observed(x.reshape(-1).to(torch.float64), torch.int64, {}, [], (lo.reshape(-1), hi.reshape(-1).clamp(0, 1)))


def _multinomial_enlarge(bound, n):
    probs, s = bound["self"], int(bound["num_samples"])
    rows = probs.reshape(1, -1) if probs.dim() == 1 else probs
    r = _repeats(rows.shape[0] * s, rows.numel(), n)
    return {"self": rows.repeat(r, 1)}, 1


def _multinomial_deterministic(bound) -> str:
    probs = _cpu64(bound["self"])
    if probs.numel() == 0 or int(bound["num_samples"]) == 0:
        return "the call has no element to draw"
    return "each row has one category of positive probability" if bool(((probs > 0).sum(-1) == 1).all()) else ""


MULTINOMIAL = Law("Categorical", True, _multinomial_observe, _unused_cdf, _multinomial_enlarge,
                  lambda b: (f"Categorical(probs={_tensor_summary(b['self'])}, num_samples={int(b['num_samples'])}, "
                             f"replacement={bool(b['replacement'])})"), _multinomial_deterministic)


# randperm(n): uniform on the permutations. The rank of each value among those not placed yet is uniform on
# {0..n-j-1} given the earlier ones (the Lehmer code); the first and last PERM_WINDOW positions are judged.


def _lehmer(perms, window: int):
    """(codes, remaining counts) of the first and the last `window` positions of each row of perms."""
    torch = _torch()
    n = perms.shape[1]
    if n <= 2 * window:
        head, tail = n, 0
    else:
        head, tail = window, window
    p = perms.to(torch.int64)
    first = p[:, :head]
    smaller_before = (first.unsqueeze(1) < first.unsqueeze(2)).tril(-1).sum(-1)  # [r, j]: i < j, p_i < p_j
    codes, counts = [first - smaller_before], [n - torch.arange(head)]
    if tail:
        last = p[:, n - tail:]
        smaller_after = (last.unsqueeze(1) < last.unsqueeze(2)).triu(1).sum(-1)  # k > j, p_k < p_j
        codes.append(smaller_after)
        counts.append(n - torch.arange(n - tail, n))
    code = torch.cat(codes, dim=1)
    m = torch.cat(counts).unsqueeze(0).expand_as(code)
    return code.reshape(-1).to(torch.float64), m.reshape(-1).to(torch.float64)


def _randperm_observe(bound, outputs, written, tol):
    torch = _torch()
    n = int(bound["n"])
    perms = _out(outputs).detach().to("cpu").reshape(-1, n).to(torch.int64)
    ok = (perms.sort(dim=1).values == torch.arange(n)).all(dim=1)
    problems = [] if bool(ok.all()) else [f"{int((~ok).sum())} of {perms.shape[0]} results are not a permutation "
                                          f"of 0..{n - 1}"]
    code, m = _lehmer(perms, PERM_WINDOW)
    return Observed(code, torch.int64, {"m": m}, problems)


def _randperm_enlarge(bound, n):
    size = int(bound["n"])
    per_call = min(size, 2 * PERM_WINDOW)
    calls = max(1, min(math.ceil(n / max(1, per_call)), MAX_REDRAW_CALLS, max(1, MAX_TILED_ELEMENTS // max(1, size))))
    return {}, calls


RANDPERM = Law("UniformPermutation", True, _randperm_observe, _rank_cdf, _randperm_enlarge,
               lambda b: f"UniformPermutation(n={int(b['n'])})",
               lambda b: "n <= 1" if int(b["n"]) <= 1 else "")


# native_dropout(input, p, train) -> (input * mask / (1 - p), mask): mask ~ Bernoulli(1 - p) iid


def _close(actual, expected, rtol: float, atol: float):
    """Elementwise: within atol + rtol |expected|, or equal (infinities), or both NaN."""
    torch = _torch()
    return (actual == expected) | (torch.isnan(actual) & torch.isnan(expected)) | (
        (actual - expected).abs() <= atol + rtol * expected.abs())


def _dropout_observe(bound, outputs, written, tol):
    torch = _torch()
    p = _num(bound["p"])
    x = _cpu64(bound["input"])
    y, mask = _cpu64(outputs[0]), _cpu64(outputs[1])
    obs = _elementwise(outputs[1], p=1.0 - p)
    rtol, atol = tol(outputs[0].dtype)
    expected = x * mask * (1.0 / (1.0 - p))
    wrong = ~_close(y, expected, rtol, atol)
    if bool(wrong.any()):
        i = int(wrong.reshape(-1).nonzero()[0])
        got, want = float(y.reshape(-1)[i]), float(expected.reshape(-1)[i])
        obs.problems.append(f"{int(wrong.sum())} of {y.numel()} values are not input * mask / (1 - p) (first at "
                            f"flat index {i}: {got:.6g}, expected {want:.6g})")
    return obs


def _dropout_enlarge(bound, n):
    x = bound["input"]
    shape = tuple(x.shape)
    return {"input": _tile(x, shape, _repeats(_numel(shape), _numel(shape), n))}, 1


def _dropout_deterministic(bound) -> str:
    p = _num(bound["p"])
    if bound["train"] is False:
        return "train=False"
    if bound["input"].numel() == 0:
        return "the call has no element to draw"
    return "p == 0: every element is kept" if p == 0 else ("p == 1: every element is dropped" if p == 1 else "")


NATIVE_DROPOUT = Law("Bernoulli", True, _dropout_observe, _bernoulli_cdf, _dropout_enlarge,
                     lambda b: f"mask ~ Bernoulli(1 - p), p={_num(b['p']):.6g}; kept values input / (1 - p)",
                     _dropout_deterministic)


# rrelu_with_noise(x, noise, lower, upper, training): noise ~ U(lower, upper) where x < 0, 1 where x > 0
# (x == 0 and NaN: either), output x * noise


def _rrelu_observe(bound, outputs, written, tol):
    torch = _torch()
    lower, upper = _num(bound["lower"]), _num(bound["upper"])
    x, noise, y = _cpu64(bound["self"]), written["noise"], _cpu64(outputs[0])
    n64 = _cpu64(noise)
    neg, pos = x < 0, x > 0
    either = ~neg & ~pos
    problems = []
    count = int((pos & (n64 != 1)).sum())
    if count:
        problems.append(f"{count} of {int(pos.sum())} noise values where the input is > 0 are not 1")
    count = int((either & ~((n64 == 1) | ((n64 >= lower) & (n64 <= upper)))).sum())
    if count:
        problems.append(f"{count} noise values where the input is 0 or NaN are neither 1 nor in [lower, upper]")
    rtol, atol = tol(outputs[0].dtype)
    wrong = ~_close(y, x * n64, rtol, atol)
    if bool(wrong.any()):
        problems.append(f"{int(wrong.sum())} of {y.numel()} values are not input * noise")
    obs = Observed(n64[neg].reshape(-1), noise.dtype, {"a": lower, "b": upper}, problems)
    _rounded_bounds(obs)
    return obs


def _rrelu_enlarge(bound, n):
    torch = _torch()
    x = bound["self"]
    shape = tuple(x.shape)
    negatives = int((x.detach() < 0).sum())
    r = _repeats(negatives, 2 * _numel(shape), n)
    tiled = _tile(x, shape, r)
    return {"self": tiled, "noise": torch.empty_like(tiled)}, 1


def _rrelu_deterministic(bound) -> str:
    if not bound["training"]:
        return "training=False"
    if _num(bound["lower"]) == _num(bound["upper"]):
        return "lower == upper"
    return "" if bool((bound["self"].detach() < 0).any()) else "no negative input: nothing is drawn"


RRELU = Law("U", False, _rrelu_observe, _uniform_cdf, _rrelu_enlarge,
            lambda b: f"noise ~ U(lower={_num(b['lower']):.6g}, upper={_num(b['upper']):.6g}) where input < 0",
            _rrelu_deterministic, _uniform_support)


# poisson(rates), _standard_gamma(alpha): one parameter tensor, the input


def _input_enlarge(bound, n):
    x = bound["self"]
    shape = tuple(x.shape)
    return {"self": _tile(x, shape, _repeats(_numel(shape), _numel(shape), n))}, 1


POISSON = Law("Poisson", True, lambda b, o, w, tol: _elementwise(_out(o), rate=b["self"]), _poisson_cdf,
              _input_enlarge, lambda b: f"Poisson(rate={_tensor_summary(b['self'])})",
              lambda b: _no_element(b) or ("rate is 0 everywhere" if bool((_cpu64(b["self"]) == 0).all()) else ""))
GAMMA = Law("Gamma", False, lambda b, o, w, tol: _elementwise(_out(o), shape=b["self"]), _gamma_cdf,
            _input_enlarge, lambda b: f"Gamma(alpha={_tensor_summary(b['self'])}, 1)", _no_element, _nonnegative)


LAWS: dict = {
    "uniform_": UNIFORM, "uniform": UNIFORM,
    "normal_": NORMAL_FILL, "normal": NORMAL,
    "cauchy_": CAUCHY, "cauchy": CAUCHY,
    "exponential_": EXPONENTIAL, "exponential": EXPONENTIAL,
    "log_normal_": LOG_NORMAL, "log_normal": LOG_NORMAL,
    "geometric_": GEOMETRIC, "geometric": GEOMETRIC,
    "bernoulli_": BERNOULLI, "bernoulli": BERNOULLI,
    "rand": RAND, "rand_like": RAND_LIKE, "randn": RANDN, "randn_like": RANDN_LIKE,
    "randint": RANDINT, "randint_like": RANDINT_LIKE,
    "randperm": RANDPERM, "multinomial": MULTINOMIAL,
    "native_dropout": NATIVE_DROPOUT,
    "rrelu_with_noise": RRELU, "rrelu_with_noise_": RRELU,
    "poisson": POISSON, "_standard_gamma": GAMMA,
}
_NEEDS = {"poisson": ("special", "gammaincc"), "_standard_gamma": ("special", "gammainc")}


def law_for(call) -> Optional[Law]:
    """The law of a recorded call (RandomCall or OpOverload), or None (no law known: the caller falls back
    to the two-sample test)."""
    op = getattr(call, "op", call)
    name = op.overloadpacket.__name__
    law = LAWS.get(name)
    if law is None or op._overloadname.endswith("out"):  # an out= variant: its enlarged draw would resize out
        return None
    if law.overloads is not None and op._overloadname not in law.overloads:
        return None
    needs = _NEEDS.get(name)
    if needs and not hasattr(getattr(_torch(), needs[0], None), needs[1]):  # torch too old for its CDF
        return None
    return law


# ---------------------------------------------------------------------------------------------------------
# The tests


def _mantissa_bits(dtype) -> int:
    return round(-math.log2(_torch().finfo(dtype).eps))


def _spacing(a, dtype):
    """The gap above |x| (a = |x|, float64) in the dtype's grid."""
    torch = _torch()
    fi = torch.finfo(dtype)
    smallest = fi.tiny * fi.eps
    _, e = torch.frexp(a)
    s = torch.pow(2.0, (e - 1 - _mantissa_bits(dtype)).to(torch.float64))
    return torch.where(a < fi.tiny, torch.full_like(a, smallest), s)


def _overflow_bound(dtype) -> float:
    """Where the dtype's rounding turns a value into inf: its largest finite value plus half a step."""
    fi = _torch().finfo(dtype)
    return fi.max + (2.0 ** (math.log2(fi.max) // 1 - _mantissa_bits(dtype))) / 2 if fi.bits < 64 else fi.max


@dataclass
class _Fit:
    lo: object  # F(x-) per value
    hi: object  # F(x) per value
    outside: int  # values outside the support
    nan: int
    inf: int  # infinities where the law has (almost) no mass
    step: object  # per value: the mass of its rounding step (continuous) or of its outcome (discrete)


def _fit(law: Law, obs: Observed) -> _Fit:
    """(F(x-), F(x)), the support and non-finite counts, and the mass of each value's step."""
    torch = _torch()
    x = obs.x
    nan = torch.isnan(x)
    if obs.bounds is not None:
        lo, hi = obs.bounds
        return _Fit(lo, hi, int((hi - lo <= 0).sum()), int(nan.sum()), 0, hi - lo)
    floating = obs.dtype.is_floating_point
    pos_inf, neg_inf = x == math.inf, x == -math.inf
    big = _overflow_bound(obs.dtype) if floating else math.inf
    t = torch.where(nan, torch.zeros_like(x), x.clamp(-big, big))
    s = _spacing(t.abs(), obs.dtype) if floating else torch.ones_like(x)
    if law.discrete:  # the integers the dtype rounds to x; beyond the largest finite value for +-inf
        a, b = (torch.ceil(t - s / 2), torch.ceil(t + s / 2) - 1) if floating else (t, t)
        if floating:
            edge = float(math.ceil(big))
            a = torch.where(pos_inf, torch.full_like(x, edge), torch.where(neg_inf, torch.full_like(x, -math.inf), a))
            b = torch.where(pos_inf, torch.full_like(x, math.inf), torch.where(neg_inf, torch.full_like(x, -edge), b))
        lo, hi = law.cdf(obs, a - 1), law.cdf(obs, b)
        lo = torch.where(neg_inf, torch.zeros_like(lo), lo)
        hi = torch.where(pos_inf, torch.ones_like(hi), hi)
        mass = hi - lo
        outside = (mass <= 0) & ~nan & ~pos_inf & ~neg_inf
        step = mass
    else:
        f = law.cdf(obs, t)
        lo = torch.where(neg_inf, torch.zeros_like(f), f)
        hi = torch.where(pos_inf, torch.ones_like(f), f)
        step = (law.cdf(obs, t + s / 2) - law.cdf(obs, t - s / 2)).clamp(0.0, 1.0)
        step = torch.where(pos_inf | neg_inf, hi - lo, step)
        inside = law.support(obs) if law.support is not None else torch.ones_like(nan)
        outside = ~inside & ~nan & ~pos_inf & ~neg_inf
    inf = (pos_inf | neg_inf) & (hi - lo < INF_MASS)
    return _Fit(lo, hi, int(outside.sum()), int(nan.sum()), int(inf.sum()), step)


def _allowance(law: Law, obs: Observed, fit: _Fit) -> float:
    """The KS allowance for the dtype's rounding (continuous laws on floating values)."""
    if law.discrete or obs.bounds is not None or not obs.dtype.is_floating_point or fit.step.numel() == 0:
        return 0.0
    return max(float(fit.step.max()), 2.0 ** -(_mantissa_bits(obs.dtype) + 1))


def _pit(fit: _Fit, x):
    """u = F(x-) + V (F(x) - F(x-)), V ~ U(0, 1) from a private generator seeded by PIT_SEED and a hash of the
    values x: the same values give the same u, two draws independent V's (one V for every draw would add its
    own fluctuation to every test of a discrete law alike)."""
    import hashlib

    torch = _torch()
    digest = hashlib.blake2b(x.contiguous().numpy().tobytes(), digest_size=6).digest()
    g = torch.Generator().manual_seed(PIT_SEED + int.from_bytes(digest, "little"))
    v = torch.rand(fit.lo.shape, generator=g, dtype=torch.float64)
    return (fit.lo + v * (fit.hi - fit.lo)).clamp(0.0, 1.0)


def ks_statistic(u) -> float:
    """The one-sample Kolmogorov-Smirnov statistic of u against U(0, 1)."""
    torch = _torch()
    n = u.numel()
    if n == 0:
        return 0.0
    s = torch.sort(u.reshape(-1).to(torch.float64)).values
    i = torch.arange(1, n + 1, dtype=torch.float64)
    return float(torch.maximum(i / n - s, s - (i - 1) / n).max())


def kolmogorov_q(lam: float) -> float:
    """Kolmogorov's tail Q(lam) = 2 sum (-1)^(k-1) exp(-2 k^2 lam^2) (Numerical Recipes' probks)."""
    if lam < 1e-3:
        return 1.0
    total, sign, previous = 0.0, 1.0, 0.0
    for k in range(1, 101):
        term = sign * 2.0 * math.exp(-2.0 * k * k * lam * lam)
        total += term
        if abs(term) <= 1e-10 * previous or abs(term) <= 1e-12 * total:
            return min(1.0, max(0.0, total))
        sign, previous = -sign, abs(term)
    return 1.0


def _stephens(n: int) -> float:
    return math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)


def ks_pvalue_one_sample(d: float, n: int) -> float:
    """The asymptotic p-value of the one-sample KS statistic d of n values (Stephens' correction)."""
    return 1.0 if d <= 0 or n == 0 else kolmogorov_q(_stephens(n) * d)


def ks_critical(n: int, alpha: float) -> float:
    """The D above which ks_pvalue_one_sample(D, n) < alpha."""
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if kolmogorov_q(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi / _stephens(n)


# ---------------------------------------------------------------------------------------------------------
# The verdict


@dataclass
class Verdict:
    """`passed`; `text`: what was compared (law, parameters, values, D against its critical value) or what
    failed; `values`: the values fitted; `kind`: "law", DETERMINISTIC (nothing drawn: compare values as any
    op's) or "no law" (fall back to the two-sample test)."""
    passed: bool
    text: str
    values: int = 0
    kind: str = "law"
    op: str = ""


def default_tolerance(dtype) -> tuple:
    """(rtol, atol) of native_dropout's kept values and rrelu's products: 2 eps, the smallest normal."""
    torch = _torch()
    if not dtype.is_floating_point:
        return 0.0, 0.0
    fi = torch.finfo(dtype)
    return 2 * fi.eps, fi.tiny


def _tolerance(rtol: Optional[float], atol: Optional[float]) -> Callable:
    def tol(dtype):
        r, a = default_tolerance(dtype)
        return (r if rtol is None else rtol, a if atol is None else atol)
    return tol


def _draw(call: RandomCall, law: Law, bound: dict, n: int, device) -> RandomCall:
    """The same overload called again with its arguments enlarged (several calls stacked for randperm)."""
    torch = _torch()
    changes, calls = law.enlarge(bound, n)
    if device is not None:
        changes = {k: (v.to(device) if _is_tensor(v) else v) for k, v in changes.items()}
    if "device" in bound and (device is not None or bound["device"] is None):  # a factory
        changes["device"] = device if device is not None else call.outputs[0].device  # not the default device
    args, kwargs = _replaced(call.op, call.args, call.kwargs, changes)
    if calls == 1:
        return _run(call.op, args, kwargs, clone_all=False)[0]
    return RandomCall(call.op, args, kwargs, (torch.stack([call.op(*args, **kwargs) for _ in range(calls)]),), {})


def _problems(obs: Observed, fit: _Fit, where: str) -> str:
    parts = list(obs.problems)
    if fit.nan:
        parts.append(f"{fit.nan} NaN")
    if fit.inf:
        parts.append(f"{fit.inf} infinite (the law has no mass there)")
    if fit.outside:
        parts.append(f"{fit.outside} outside the support")
    return f"{where}: {'; '.join(parts)} (of {obs.x.numel()} values)" if parts else ""


def _observe(law: Law, call: RandomCall, tol: Callable) -> tuple:
    bound = bind(call.op, call.args, call.kwargs)
    obs = law.observe(bound, call.outputs, call.written, tol)
    return obs, _fit(law, obs)


def _same(a: Observed, b: Observed, fit: _Fit, alpha: float) -> bool:
    """The two draws are bitwise equal and that is improbable (< alpha) under the law."""
    torch = _torch()
    if a.x.shape != b.x.shape or not torch.equal(a.x, b.x):
        return False
    log_p = float(torch.log(fit.step.clamp(min=1e-300, max=1.0)).sum())
    return log_p < math.log(alpha)


def judge(call: RandomCall, device=None, alpha: float = ALPHA, draw_values: int = DRAW_VALUES,
          rtol: Optional[float] = None, atol: Optional[float] = None) -> Verdict:
    """The recorded call against its law: its values in the support, then two draws of the same overload
    with its arguments enlarged to >= draw_values values on `device` (default: where the call ran): in
    the support, following the law (KS of the PIT at alpha/2) and not equal (at alpha/2)."""
    name = f"aten::{call.name}.{call.op._overloadname}"
    law = law_for(call)
    if law is None:
        return Verdict(True, f"{name}: no law known (the two-sample test applies)", 0, "no law", name)
    bound = bind(call.op, call.args, call.kwargs)
    reason = law.deterministic(bound)
    if reason:
        return Verdict(True, f"{name}: deterministic ({reason}): its values are compared as any op's", 0,
                       DETERMINISTIC, name)
    tol = _tolerance(rtol, atol)
    described = law.describe(bound)
    obs, fit = _observe(law, call, tol)
    failed = _problems(obs, fit, "the recorded call")
    if failed:
        return Verdict(False, f"{name} {described}: {failed}", obs.x.numel(), "law", name)
    first, second = (_draw(call, law, bound, draw_values, device) for _ in range(2))
    obs1, fit1 = _observe(law, first, tol)
    obs2, fit2 = _observe(law, second, tol)
    failed = _problems(obs1, fit1, "a draw") or _problems(obs2, fit2, "a draw")
    n = obs1.x.numel()
    dtype = str(first.outputs[0].dtype).replace("torch.", "")
    where = f"{n} values drawn on {first.outputs[0].device} ({dtype})"
    if not failed and n == 0:
        return Verdict(True, f"{name} {described}: the draws drew no value", 0, DETERMINISTIC, name)
    if failed:
        return Verdict(False, f"{name} {described}, {where}: {failed}", n, "law", name)
    if _same(obs1, obs2, fit1, alpha / 2):
        return Verdict(False, f"{name} {described}: the op returned the same {n} values on two calls", n, "law", name)
    d, crit, allowance = ks_statistic(_pit(fit1, obs1.x)), ks_critical(n, alpha / 2), _allowance(law, obs1, fit1)
    p = ks_pvalue_one_sample(d, n)
    rounding = f" + {allowance:.2g} (rounding)" if allowance > 1e-6 else ""
    summary = (f"{name} {described}, {where}: PIT KS D={d:.3g} {'>' if d > crit + allowance else '<='} "
               f"{crit:.3g} (critical at {alpha / 2:.2g}){rounding}, p={p:.2g}")
    if d > crit + allowance:
        return Verdict(False, f"{summary}: the values do not follow the law", n, "law", name)
    return Verdict(True, f"{summary}; two draws differ", n, "law", name)


def _call_key(call: RandomCall) -> tuple:
    import torch

    def key(v):
        if isinstance(v, torch.Tensor):
            return ("tensor", tuple(v.shape), str(v.dtype))
        if isinstance(v, (list, tuple)):
            return tuple(key(x) for x in v)
        return repr(v)

    return (str(call.op), key(tuple(call.args)), key(tuple(sorted(call.kwargs.items()))))


def distinct_calls(calls: list, limit: int = MAX_CALLS_PER_CASE) -> list:
    """The first `limit` calls with a law, distinct by overload and parameters (tensors by shape and dtype)."""
    seen, out = set(), []
    for c in calls:
        k = _call_key(c)
        if k in seen or law_for(c) is None:
            continue
        seen.add(k)
        out.append(c)
        if len(out) == limit:
            break
    return out


def all_deterministic(calls: list) -> bool:
    """Whether a call's random ATen calls all drew nothing by their laws (rrelu_with_noise with training=False,
    native_dropout with train=False): then its values are compared as any op's. False for no calls."""
    return bool(calls) and all(law_for(c) is not None and law_for(c).deterministic(bind(c.op, c.args, c.kwargs))
                               for c in calls)


def judge_case(calls: list, device=None, alpha: float = ALPHA, draw_values: int = DRAW_VALUES,
               rtol: Optional[float] = None, atol: Optional[float] = None) -> list:
    """Verdicts of a case's recorded calls: distinct_calls, alpha split over those that draw."""
    chosen = distinct_calls(calls)
    drawing = [c for c in chosen if not law_for(c).deterministic(bind(c.op, c.args, c.kwargs))]
    per_call = alpha / max(1, len(drawing))
    return [judge(c, device, per_call, draw_values, rtol, atol) for c in chosen]


# ---------------------------------------------------------------------------------------------------------
# For random_ops.py's two-sample fallback


def features_with_nonfinite(result) -> tuple:
    """(mean, mean square, zero fraction, non-finite fraction) of every numeric value of a result (tensors,
    nested): the first two over the finite values, the fractions over all values."""
    import torch
    from torch.utils._pytree import tree_flatten

    values = [t.detach().to("cpu").to_dense().reshape(-1).to(torch.float64) for t in tree_flatten(result)[0]
              if isinstance(t, torch.Tensor) and not t.is_complex() and t.numel()]
    values += [torch.view_as_real(t.detach().to("cpu").to_dense()).reshape(-1).to(torch.float64)
               for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor) and t.is_complex() and t.numel()]
    if not values:
        return (0.0, 0.0, 0.0, 0.0)
    v = torch.cat(values)
    finite_mask = v.isfinite()
    finite = v[finite_mask]
    zero = float((v == 0).double().mean())
    nonfinite = float((~finite_mask).double().mean())
    if not finite.numel():
        return (0.0, 0.0, zero, nonfinite)
    return (float(finite.mean()), float((finite * finite).mean()), zero, nonfinite)
