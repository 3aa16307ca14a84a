"""Random ops judged by their contract (crossdev.opinfo.random_laws, docs/opinfo.md "Random ops"): every law
passes PyTorch's own CPU kernels, and wrong kernels fail. A wrong kernel is a dispatch mode (`Wrong`) that
rewrites the ATen op's arguments or result, as a device's kernel would get them wrong: it sits under the
recorder, so the recorded call keeps the arguments the caller passed, and judge's draws go through it too.
Every test seeds the CPU generator and the PIT's V is seeded by the values, so each verdict is fixed; the
wrong kernels are 5% off or more, which the 1e5 values drawn find with D at 3x the critical value or more
(or values outside the support); a correct kernel fails with probability <= 1e-4 per seed."""
import math

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from crossdev.opinfo import random_laws as R


@pytest.fixture(autouse=True)
def one_thread_and_seed():
    """One intra-op thread (1e5-value statistics on a loaded 2-core host crawl with two) and a fixed seed."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1234)
        yield
    torch.set_num_threads(threads)


class Wrong(TorchDispatchMode):
    """A wrong kernel for the ATen ops named in `packets`: `args(bound) -> changes` rewrites the arguments,
    `result(out, bound) -> out` the result; `same_draw` reseeds before every call."""

    def __init__(self, packets, args=None, result=None, same_draw=False):
        super().__init__()
        self.packets, self.args, self.result, self.same_draw = set(packets), args, result, same_draw

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.overloadpacket.__name__ not in self.packets:
            return func(*args, **kwargs)
        bound = R.bind(func, args, kwargs)
        if self.args is not None:
            args, kwargs = R._replaced(func, args, kwargs, self.args(bound))
        if self.same_draw:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0)
                out = func(*args, **kwargs)
        else:
            out = func(*args, **kwargs)
        return self.result(out, bound) if self.result is not None else out


def verdicts(fn, wrong=None):
    """fn() run under the recorder (under the wrong kernel, when given), then its calls judged."""
    if wrong is None:
        with R.RandomCalls() as rec:
            fn()
        return R.judge_case(rec.calls)
    with wrong:
        with R.RandomCalls() as rec:
            fn()
        return R.judge_case(rec.calls)


def only(vs, op):
    found = [v for v in vs if v.op.startswith(f"aten::{op}.")]
    assert len(found) == 1, [v.text for v in vs]
    return found[0]


def empty(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype)


X = torch.linspace(-2, 2, 60).reshape(3, 4, 5)  # half negative (rrelu), no zero

CORRECT = {  # name -> (the call, the ATen op judged)
    "uniform_": (lambda: empty(7).uniform_(-3, 5), "uniform_"),
    "uniform_ bfloat16": (lambda: empty(7, dtype=torch.bfloat16).uniform_(-100, 100), "uniform_"),
    "uniform_ complex64": (lambda: empty(7, dtype=torch.complex64).uniform_(1, 2), "uniform_"),
    "normal_": (lambda: empty(7).normal_(2, 0.5), "normal_"),
    "normal_ float16": (lambda: empty(7, dtype=torch.float16).normal_(-2, 0.5), "normal_"),
    "normal_ complex128": (lambda: empty(7, dtype=torch.complex128).normal_(1, 3), "normal_"),
    "normal Tensor_Tensor": (lambda: torch.normal(torch.tensor([0., 1., -3.]), torch.tensor([1., 0.5, 2.])), "normal"),
    "normal Tensor_Tensor std 0": (lambda: torch.normal(torch.tensor([0., 1.]), torch.tensor([1., 0.])), "normal"),
    "normal Tensor_float": (lambda: torch.normal(torch.tensor([0., 5.]), 2.0), "normal"),
    "normal float_Tensor": (lambda: torch.normal(1.5, torch.tensor([0.5, 3.])), "normal"),
    "normal float_float": (lambda: torch.normal(1.5, 0.3, (4,)), "normal"),
    "cauchy_": (lambda: empty(7).cauchy_(-2, 1), "cauchy_"),
    "cauchy_ float16 (infinities by overflow)": (lambda: empty(7, dtype=torch.float16).cauchy_(0, 1), "cauchy_"),
    "exponential_": (lambda: empty(7).exponential_(1.5), "exponential_"),
    "log_normal_": (lambda: empty(7).log_normal_(0.5, 1.0), "log_normal_"),
    "geometric_": (lambda: empty(7).geometric_(0.2), "geometric_"),
    "geometric_ int8": (lambda: empty(7, dtype=torch.int8).geometric_(0.5), "geometric_"),
    "geometric_ float16 rounded": (lambda: empty(7, dtype=torch.float16).geometric_(0.001), "geometric_"),
    "bernoulli_.float": (lambda: empty(7).bernoulli_(0.3), "bernoulli_"),
    "bernoulli_.float p 1e-6 (two draws may be equal)": (lambda: empty(7).bernoulli_(1e-6), "bernoulli_"),
    "bernoulli_.Tensor": (lambda: empty(3, 4).bernoulli_(torch.tensor([0.1, 0.5, 0.9, 0.0])), "bernoulli_"),
    "bernoulli": (lambda: torch.bernoulli(torch.tensor([[0.2, 0.7], [1.0, 0.45]])), "bernoulli"),
    "bernoulli.p": (lambda: torch.bernoulli(empty(5), 0.8), "bernoulli"),
    "rand": (lambda: torch.rand(5), "rand"),
    "rand_like": (lambda: torch.rand_like(X), "rand_like"),
    "randn": (lambda: torch.randn(5, dtype=torch.float64), "randn"),
    "randn complex64": (lambda: torch.randn(5, dtype=torch.complex64), "randn"),
    "randn_like": (lambda: torch.randn_like(X), "randn_like"),
    "randint": (lambda: torch.randint(10, (5,)), "randint"),
    "randint.low": (lambda: torch.randint(-3, 4, (2, 2)), "randint"),
    "randint_like": (lambda: torch.randint_like(X, 3, 10), "randint_like"),
    "randint_like.Tensor": (lambda: torch.ops.aten.randint_like.Tensor(X, torch.tensor(6)), "randint_like"),
    "randperm": (lambda: torch.randperm(7), "randperm"),
    "randperm long (the first and last positions)": (lambda: torch.randperm(700), "randperm"),
    "multinomial": (lambda: torch.multinomial(torch.tensor([[0.1, 0., 0.5, 0.4], [1., 2., 3., 4.]]), 3), "multinomial"),
    "multinomial replacement": (lambda: torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 4, True), "multinomial"),
    "native_dropout": (lambda: torch.ops.aten.native_dropout(X, 0.3, True), "native_dropout"),
    "rrelu_with_noise": (lambda: F.rrelu(X, 0.1, 0.4, training=True), "rrelu_with_noise"),
    "rrelu_with_noise_": (lambda: F.rrelu(X.clone(), 0.1, 0.4, training=True, inplace=True), "rrelu_with_noise_"),
    "poisson": (lambda: torch.poisson(torch.tensor([0.5, 3., 40.])), "poisson"),
    "_standard_gamma": (lambda: torch._standard_gamma(torch.tensor([0.7, 2., 9.])), "_standard_gamma"),
    # the functional variants (functionalization, torch.compile)
    "uniform": (lambda: torch.ops.aten.uniform(empty(3), 1.0, 2.0), "uniform"),
    "cauchy": (lambda: torch.ops.aten.cauchy(empty(3), 1.0, 2.0), "cauchy"),
    "exponential": (lambda: torch.ops.aten.exponential(empty(3), 0.5), "exponential"),
    "log_normal": (lambda: torch.ops.aten.log_normal(empty(3), 0.0, 0.5), "log_normal"),
    "geometric": (lambda: torch.ops.aten.geometric(empty(3), 0.7), "geometric"),
}


@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_cpu_kernel_passes(name):
    call, op = CORRECT[name]
    v = only(verdicts(call), op)
    assert v.passed and v.kind == "law", v.text
    assert v.values >= 10_000, v.text


def test_every_law_has_a_passing_case():
    assert set(R.LAWS) <= {op for _, op in CORRECT.values()}


def shift(lo, hi, fraction):
    return lambda b: {lo: R._num(b[lo]) + fraction * (R._num(b[hi]) - R._num(b[lo])),
                      hi: R._num(b[hi]) + fraction * (R._num(b[hi]) - R._num(b[lo]))}


def nan_every_tenth(out, bound):
    flat = out.view(-1) if out.is_contiguous() else out.reshape(-1)
    flat[::10] = math.nan
    return out


def last_two_in_order(out, bound):
    return out if out[-2] < out[-1] else torch.cat([out[:-2], out[-1:], out[-2:-1]])


def scaled_values(out, bound):
    return (out[0] * 1.1, out[1])


def dropout_keeping_more(bound):
    return {"p": R._num(bound["p"]) - 0.1}


def dropout_rescaled(out, bound):  # the mask of p - 0.1, the kept values scaled as for p
    y, mask = out
    return (bound["input"] * mask / (1 - R._num(bound["p"])), mask)


WRONG = {  # name -> (the call, the wrong kernel, the ATen op judged, what the failure says)
    "uniform shifted by 10% of the range": (
        lambda: empty(7).uniform_(0, 1), Wrong(["uniform_"], shift("from", "to", 0.1)), "uniform_",
        "outside the support"),
    "uniform shifted inside the support (from + 10%)": (
        lambda: empty(7).uniform_(0, 1), Wrong(["uniform_"], lambda b: {"from": 0.1}), "uniform_", "do not follow"),
    "normal std x1.15": (
        lambda: empty(7).normal_(1, 2), Wrong(["normal_"], lambda b: {"std": 2 * 1.15}), "normal_", "do not follow"),
    "normal (tensors) ignoring std": (
        lambda: torch.normal(torch.zeros(4), torch.full((4,), 2.0)),
        Wrong(["normal"], lambda b: {"std": torch.ones_like(b["std"])}), "normal", "do not follow"),
    "exponential rate x1.1": (
        lambda: empty(7).exponential_(2.0), Wrong(["exponential_"], lambda b: {"lambd": 2.2}), "exponential_",
        "do not follow"),
    "cauchy median + 0.1 sigma": (
        lambda: empty(7).cauchy_(0, 1), Wrong(["cauchy_"], lambda b: {"median": 0.1}), "cauchy_", "do not follow"),
    "log_normal std x1.1": (
        lambda: empty(7).log_normal_(0, 1), Wrong(["log_normal_"], lambda b: {"std": 1.1}), "log_normal_",
        "do not follow"),
    "geometric p x1.1": (
        lambda: empty(7).geometric_(0.3), Wrong(["geometric_"], lambda b: {"p": 0.33}), "geometric_", "do not follow"),
    "bernoulli ignoring its p tensor (0.5)": (
        lambda: torch.bernoulli(torch.tensor([0.1, 0.2, 0.9, 0.3])),
        Wrong(["bernoulli"], lambda b: {"self": torch.full_like(b["self"], 0.5)}), "bernoulli", "do not follow"),
    "bernoulli_ p + 0.05": (
        lambda: empty(7).bernoulli_(0.5), Wrong(["bernoulli_"], lambda b: {"p": 0.55}), "bernoulli_", "do not follow"),
    "10% NaN": (
        lambda: empty(7).normal_(), Wrong(["normal_"], result=nan_every_tenth), "normal_", "NaN"),
    "the same draw on every call": (
        lambda: empty(7).uniform_(), Wrong(["uniform_"], same_draw=True), "uniform_", "the same 100000 values"),
    "randn the same on every call": (
        lambda: torch.randn(3), Wrong(["randn"], same_draw=True), "randn", "the same"),
    "dropout keeping with 1 - p + 0.1": (
        lambda: torch.ops.aten.native_dropout(X, 0.5, True),
        Wrong(["native_dropout"], dropout_keeping_more, dropout_rescaled), "native_dropout", "do not follow"),
    "dropout kept values scaled wrongly": (
        lambda: torch.ops.aten.native_dropout(X, 0.5, True), Wrong(["native_dropout"], result=scaled_values),
        "native_dropout", "input * mask / (1 - p)"),
    "rrelu noise range widened by 10%": (
        lambda: F.rrelu(X, 0.1, 0.4, training=True),
        Wrong(["rrelu_with_noise"], lambda b: {"lower": 0.07, "upper": 0.43}), "rrelu_with_noise",
        "outside the support"),
    "rrelu noise range shifted inside (lower + 10%)": (
        lambda: F.rrelu(X, 0.1, 0.4, training=True), Wrong(["rrelu_with_noise"], lambda b: {"lower": 0.13}),
        "rrelu_with_noise", "do not follow"),
    "randint off-by-one high": (
        lambda: torch.randint(0, 10, (5,)), Wrong(["randint"], lambda b: {"high": 11}), "randint",
        "outside the support"),
    "randint_like off-by-one low": (
        lambda: torch.randint_like(X, 3, 10), Wrong(["randint_like"], lambda b: {"low": 2}), "randint_like",
        "outside the support"),
    "multinomial ignoring probs": (
        lambda: torch.multinomial(torch.tensor([[0.1, 0.2, 0.3, 0.4]]), 2),
        Wrong(["multinomial"], lambda b: {"self": torch.ones_like(b["self"])}), "multinomial", "do not follow"),
    "multinomial picking a zero-probability index": (
        lambda: torch.multinomial(torch.tensor([0.5, 0.0, 0.5]), 1),
        Wrong(["multinomial"], lambda b: {"self": torch.ones_like(b["self"])}), "multinomial", "outside the support"),
    "multinomial repeating without replacement": (
        lambda: torch.multinomial(torch.tensor([0.3, 0.3, 0.4]), 2),
        Wrong(["multinomial"], lambda b: {"replacement": True}), "multinomial", "outside the support"),
    "randperm the identity": (
        lambda: torch.randperm(40), Wrong(["randperm"], result=lambda out, b: torch.arange(len(out))), "randperm",
        "the same"),
    "randperm with its last two values always in order": (
        lambda: torch.randperm(10), Wrong(["randperm"], result=last_two_in_order), "randperm", "do not follow"),
    "randperm not a permutation": (
        lambda: torch.randperm(40), Wrong(["randperm"], result=lambda out, b: out.clamp(max=4)), "randperm",
        "not a permutation"),
}


@pytest.mark.parametrize("name", list(WRONG))
def test_wrong_kernel_fails(name):
    call, wrong, op, says = WRONG[name]
    v = only(verdicts(call, wrong), op)
    assert not v.passed, v.text
    assert says in v.text, v.text


def test_the_recorded_call_is_judged_too():
    """Values outside the support in the recorded call fail before anything is drawn."""
    with R.RandomCalls() as rec:
        empty(5).bernoulli_(0.5)
    call = rec.calls[0]
    call.outputs[0].fill_(0.5)
    v = R.judge(call)
    assert not v.passed and "the recorded call" in v.text and "5 outside the support" in v.text, v.text


# The recorder


def test_recorder_dropout_uniform_bernoulli_randn_like():
    x = torch.randn(4, 5)
    with R.RandomCalls() as rec:
        F.dropout(x, 0.25, training=True)
        torch.bernoulli(torch.full((3,), 0.5))
        torch.zeros(6).uniform_(2, 3)
        torch.randn_like(x)
    names = [c.name for c in rec.calls]
    assert names == ["bernoulli_", "bernoulli", "uniform_", "randn_like"], names
    assert rec.ops == names
    uniform = rec.calls[2]
    assert torch.equal(uniform.args[0], torch.zeros(6))  # `self` as it was before the call
    assert bool((uniform.outputs[0] >= 2).all())
    assert R.bind(uniform.op, uniform.args, uniform.kwargs)["to"] == 3
    assert R._num(R.bind(rec.calls[0].op, rec.calls[0].args, rec.calls[0].kwargs)["p"]) == 0.75
    for c in rec.calls:
        assert R.law_for(c) is not None
    vs = R.judge_case(rec.calls)
    assert [v.kind for v in vs] == ["law"] * 4 and all(v.passed for v in vs), [v.text for v in vs]


def test_recorder_keeps_what_was_recorded_from_later_in_place_ops():
    """dropout on the CPU divides its bernoulli_ mask in place after the call: the record keeps the mask."""
    x = torch.randn(50)
    with R.RandomCalls() as rec:
        F.dropout(x, 0.5, training=True)
    assert [c.name for c in rec.calls] == ["bernoulli_"]
    mask = rec.calls[0].outputs[0]
    assert set(mask.unique().tolist()) <= {0.0, 1.0}


def test_recorder_rrelu_noise_written():
    x = torch.tensor([-1.0, 2.0, -3.0])
    with R.RandomCalls() as rec:
        F.rrelu(x, 0.2, 0.3, training=True)
    call = rec.calls[0]
    noise = call.written["noise"]
    assert noise[1] == 1 and 0.2 <= float(noise[0]) <= 0.3
    assert torch.equal(call.outputs[0], x * noise)


def test_calls_judged_per_case_are_distinct_and_capped():
    with R.RandomCalls() as rec:
        for _ in range(3):
            empty(5).uniform_(0, 1)
        for p in (0.1, 0.2, 0.3, 0.4, 0.6):
            empty(5).bernoulli_(p)
    chosen = R.distinct_calls(rec.calls)
    assert len(chosen) == R.MAX_CALLS_PER_CASE
    assert [c.name for c in chosen] == ["uniform_", "bernoulli_", "bernoulli_", "bernoulli_"]


@pytest.mark.parametrize("fn, why", [
    (lambda: F.rrelu(X, training=False), "training=False"),
    (lambda: torch.ops.aten.native_dropout(X, 0.4, False), "train=False"),
    (lambda: torch.ops.aten.native_dropout(X, 0.0, True), "p == 0"),
    (lambda: torch.bernoulli(torch.tensor([0.0, 1.0, 1.0])), "p is 0 or 1"),
    (lambda: empty(4).bernoulli_(1.0), "p == 1"),
    (lambda: empty(4).uniform_(2, 2), "from == to"),
    (lambda: empty(4).normal_(3, 0), "std == 0"),
    (lambda: torch.randint(4, 5, (3,)), "high - low == 1"),
    (lambda: torch.randperm(1), "n <= 1"),
    (lambda: torch.rand(0), "no element"),
    (lambda: F.rrelu(X.abs(), training=True), "no negative input"),
])
def test_deterministic_calls_say_compare_values(fn, why):
    with R.RandomCalls() as rec:
        fn()
    v = R.judge(rec.calls[-1])
    assert v.kind == R.DETERMINISTIC and v.passed and why in v.text, v.text


def test_all_deterministic():
    with R.RandomCalls() as eval_only:
        F.rrelu(X, training=False)
        torch.ops.aten.native_dropout(X, 0.4, False)
    with R.RandomCalls() as drawing:
        F.rrelu(X, training=False)
        F.rrelu(X, training=True)
    assert R.all_deterministic(eval_only.calls)
    assert not R.all_deterministic(drawing.calls) and not R.all_deterministic([])


def test_no_law_falls_back():
    """A random op without a law (_fused_dropout, CUDA's): the caller falls back to the two-sample test."""
    op = torch.ops.aten._fused_dropout.default
    call = R.RandomCall(op, (torch.ones(4), 0.5), {}, (torch.ones(4), torch.ones(4, dtype=torch.uint8)))
    assert R.law_for(call) is None
    v = R.judge(call)
    assert v.kind == "no law" and v.passed, v.text


def test_draws_on_the_device_asked():
    with R.RandomCalls() as rec:
        torch.randn(3)
        empty(3).uniform_(1, 2)
    for call in rec.calls:
        v = R.judge(call, torch.device("cpu"))
        assert v.passed and "drawn on cpu" in v.text, v.text


def test_out_variants_have_no_law():
    """normal(..., out=t): an enlarged draw would resize `out`; the two-sample test applies."""
    with R.RandomCalls() as rec:
        torch.normal(torch.zeros(3), torch.ones(3), out=torch.empty(3))
    assert rec.calls[0].op._overloadname.endswith("out")
    assert R.law_for(rec.calls[0]) is None


# The statistics


def test_ks_statistic_and_pvalue_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    g = torch.Generator().manual_seed(7)
    for n in (50, 1000, 100_000):
        u = torch.rand(n, generator=g, dtype=torch.float64) ** 1.02
        d = R.ks_statistic(u)
        assert d == pytest.approx(stats.kstest(u.numpy(), "uniform").statistic, abs=1e-12)
        # Stephens' corrected asymptotic p-value against scipy's exact one
        exact = stats.kstwo.sf(d, n)
        assert R.ks_pvalue_one_sample(d, n) == pytest.approx(exact, rel=0.05, abs=1e-4)


def test_ks_critical_inverts_the_pvalue():
    for n, alpha in ((100_000, 5e-5), (1000, 1e-3)):
        c = R.ks_critical(n, alpha)
        assert R.ks_pvalue_one_sample(c * 1.0001, n) < alpha < R.ks_pvalue_one_sample(c * 0.9999, n)
    assert R.ks_critical(100_000, 5e-5) == pytest.approx(0.00728, abs=1e-5)


def test_randomized_pit_of_a_discrete_law_is_uniform():
    """Bernoulli(0.3) values through the randomized PIT: u ~ U(0, 1), not two atoms."""
    obs = R._elementwise((torch.rand(20_000) < 0.3).float(), p=0.3)
    fit = R._fit(R.BERNOULLI, obs)
    u = R._pit(fit, obs.x)
    assert R.ks_statistic(u) < R.ks_critical(u.numel(), 1e-4)


def test_rounding_allowance():
    """bfloat16 rounds: the allowance is the largest CDF mass of one step among the values, >= 2**-8."""
    x = torch.tensor([0.25, 0.75, 1.5], dtype=torch.bfloat16)
    obs = R._elementwise(x, a=0.0, b=1.6)
    R._rounded_bounds(obs)
    fit = R._fit(R.UNIFORM, obs)
    assert R._allowance(R.UNIFORM, obs, fit) == pytest.approx(2 ** -7 / 1.6)  # the step at 1.5 is 2**-7
    obs = R._elementwise(x[:2], a=0.0, b=1.6)
    R._rounded_bounds(obs)
    assert R._allowance(R.UNIFORM, obs, R._fit(R.UNIFORM, obs)) == 2 ** -8  # the floor: 8 digits
    obs32 = R._elementwise(x.float(), a=0.0, b=2.0)
    R._rounded_bounds(obs32)
    assert R._allowance(R.UNIFORM, obs32, R._fit(R.UNIFORM, obs32)) < 1e-6


def test_infinity_only_where_the_law_has_mass():
    inf = torch.tensor([math.inf, 0.5], dtype=torch.float16)
    cauchy = R._elementwise(inf, loc=0.0, scale=1.0)
    assert R._fit(R.CAUCHY, cauchy).inf == 0  # mass beyond 65520: 4.9e-6
    normal = R._elementwise(inf, loc=0.0, scale=1.0)
    assert R._fit(R.NORMAL, normal).inf == 1


def test_features_with_nonfinite():
    t = torch.tensor([0.0, 2.0, math.nan, math.inf, -2.0])
    mean, square, zeros, nonfinite = R.features_with_nonfinite((t, [torch.tensor([4.0])]))
    assert mean == pytest.approx(1.0) and square == pytest.approx(6.0)
    assert zeros == pytest.approx(1 / 6) and nonfinite == pytest.approx(2 / 6)
    assert R.features_with_nonfinite(torch.tensor([math.nan]))[3] == 1.0
