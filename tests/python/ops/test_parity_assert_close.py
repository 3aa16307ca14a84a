"""Verdict parity of crossdev.parity.compare with torch.testing.assert_close.

Thousands of random (actual, expected) pairs per dtype, built to sit on the interesting
edges: values a few ULPs either side of the tolerance boundary, +-0, +-inf, NaN, subnormals,
the largest finite values, explicit tolerances (including zero), equal_nan both ways, shape
and dtype mismatches. For every pair the crossdev verdict must equal assert_close's, and the
reported mismatch count, first mismatching index, max abs/rel error and max ULP error must
equal values computed here independently (plain Python, from torch.finfo, for the ULP error; numpy
checks it again in test_parity_ulp_floor.py).
"""
import math
import random
import sys

import pytest
import torch

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
BITS = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64}
WIDTH = {torch.float16: 16, torch.bfloat16: 16, torch.float32: 32, torch.float64: 64}
PAIRS_PER_DTYPE = 1500


@pytest.fixture(scope="module")
def parity(crossdev_module):
    return crossdev_module.parity


def edge_values(dtype):
    fi = torch.finfo(dtype)
    subnormal = fi.tiny * fi.eps  # smallest positive subnormal
    return [0.0, -0.0, math.inf, -math.inf, math.nan, fi.max, -fi.max, fi.tiny, -fi.tiny, subnormal, -subnormal,
            1.0, -1.0, fi.eps, 1.0 + fi.eps]


def step_ulps(t, k):
    """t moved by k units in the last place (through the sign-magnitude bits; stays in dtype)."""
    bits = t.view(BITS[t.dtype]).to(torch.int64)
    width = WIDTH[t.dtype]
    sign = 1 << (width - 1)
    out = []
    for b in bits.reshape(-1).tolist():
        b &= (1 << width) - 1
        mag, neg = b & (sign - 1), bool(b & sign)
        pos = -mag if neg else mag
        pos += k
        nb = (sign | -pos) if pos < 0 else pos
        if nb >= sign:  # back to a signed value for the int view
            nb -= 1 << width
        out.append(nb)
    return torch.tensor(out, dtype=torch.int64).to(BITS[t.dtype]).view(t.dtype).reshape(t.shape)


def ordered(bits, width):
    sign = 1 << (width - 1)
    bits &= (1 << width) - 1
    return -(bits & (sign - 1)) if bits & sign else bits


def ulp_of(y, dtype):
    """ulp(e) as docs/parity.md defines it: eps * 2^floor(log2|e|) for normal e, and the smallest
    normal's ulp (eps * tiny) for zero and subnormals."""
    fi = torch.finfo(dtype)
    if abs(y) < fi.tiny:
        return fi.eps * fi.tiny
    return fi.eps * 2.0 ** (math.frexp(abs(y))[1] - 1)


def ulp_floor(dtype, rtol, atol):
    """atol / max(rtol, eps): errors below this magnitude count in its ulps (docs/parity.md)."""
    return atol / max(rtol, torch.finfo(dtype).eps) if atol > 0 else 0.0


def ulp_error(x, y, dtype, floor):
    """|a - e| / ulp(max(|e|, floor)); saturates at the largest double where only the quotient overflows."""
    abs_err = abs(x - y)
    if dtype not in WIDTH:
        return abs_err
    q = abs_err / ulp_of(max(abs(y), floor), dtype)
    return sys.float_info.max if math.isinf(q) and math.isfinite(abs_err) else q


def expected_metrics(actual, expected, equal_nan, rtol, atol):
    """max abs / rel / ULP over all elements, as docs/parity.md defines them."""
    a64, e64 = actual.double().reshape(-1).tolist(), expected.double().reshape(-1).tolist()
    floor = ulp_floor(actual.dtype, rtol, atol)
    max_abs = max_rel = max_ulp = 0.0
    for x, y in zip(a64, e64):
        if x == y or (math.isnan(x) and math.isnan(y) and equal_nan):
            continue
        if not (math.isfinite(x) and math.isfinite(y)):
            return math.inf, math.inf, math.inf
        abs_err = abs(x - y)
        max_abs = max(max_abs, abs_err)
        max_rel = max(max_rel, math.inf if y == 0 else abs_err / abs(y))
        max_ulp = max(max_ulp, ulp_error(x, y, actual.dtype, floor))
    return max_abs, max_rel, max_ulp


def torch_verdict(actual, expected, tolerance, equal_nan, check_dtype):
    kwargs = {} if tolerance is None else {"rtol": tolerance[0], "atol": tolerance[1]}
    try:
        torch.testing.assert_close(actual, expected, equal_nan=equal_nan, check_dtype=check_dtype, **kwargs)
        return True
    except AssertionError:
        return False


class PairMaker:
    """Random pairs for one dtype; each kind aims at one part of the semantics."""

    def __init__(self, dtype, rng):
        self.dtype, self.rng = dtype, rng
        self.edges = edge_values(dtype)

    def shape(self):
        return self.rng.choice([(), (1,), (3,), (2, 3), (4, 1, 2), (0,), (5,)])

    def randn(self, shape):
        scale = self.rng.choice([1e-6, 1e-3, 1.0, 100.0])
        values = [self.rng.gauss(0.0, 1.0) * scale for _ in range(math.prod(shape))]
        return torch.tensor(values, dtype=torch.float64).reshape(shape).to(self.dtype)

    def tolerance(self):
        return self.rng.choice([None, None, None, (0.0, 0.0), (1e-2, 1e-3), (1e-4, 0.0), (0.0, 1e-2)])

    def boundary(self):
        """actual a few ULPs inside/outside atol + rtol * |expected|."""
        tol = self.tolerance()
        rtol, atol = tol if tol is not None else torch.testing._comparison.default_tolerances(self.dtype)
        expected = self.randn(self.shape())
        sign = self.rng.choice([-1.0, 1.0])
        edge = expected.double() + sign * (atol + rtol * expected.double().abs())
        actual = step_ulps(edge.to(self.dtype), self.rng.randint(-2, 2))
        return actual, expected, tol

    def ulp_steps(self):
        expected = self.randn(self.shape())
        return step_ulps(expected, self.rng.randint(-4, 4)), expected, self.tolerance()

    def edges_mixed(self):
        shape = self.rng.choice([(), (2,), (6,), (2, 2)])
        n = math.prod(shape)
        exp_vals = [self.rng.choice(self.edges) for _ in range(n)]
        act_vals = [v if self.rng.random() < 0.5 else self.rng.choice(self.edges) for v in exp_vals]
        to = lambda vals: torch.tensor(vals, dtype=torch.float64).reshape(shape).to(self.dtype)  # noqa: E731
        return to(act_vals), to(exp_vals), self.tolerance()

    def make(self):
        kind = self.rng.choice(["boundary", "boundary", "ulp_steps", "edges_mixed", "edges_mixed"])
        return kind, *getattr(self, kind)()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_verdict_and_metrics_match_assert_close(parity, dtype):
    rng = random.Random(f"crossdev-parity-{dtype}")
    maker = PairMaker(dtype, rng)
    disagreements, verdicts = [], {True: 0, False: 0}
    boundary_verdicts = {True: 0, False: 0}
    for i in range(PAIRS_PER_DTYPE):
        kind, actual, expected, tol = maker.make()
        equal_nan = rng.random() < 0.5
        want = torch_verdict(actual, expected, tol, equal_nan, True)
        kwargs = {} if tol is None else {"rtol": tol[0], "atol": tol[1]}
        got = parity.compare(actual, expected, equal_nan=equal_nan, **kwargs)
        verdicts[want] += 1
        if kind == "boundary":
            boundary_verdicts[want] += 1
        case = f"#{i} {kind} actual={actual.tolist()} expected={expected.tolist()} tol={tol} equal_nan={equal_nan}"
        if got["passed"] != want:
            disagreements.append(f"{case}: assert_close={want} crossdev={got['passed']} ({got['summary']})")
            continue
        rtol, atol = (got["rtol"], got["atol"])
        close = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
        mismatches = int((~close).sum())
        first = tuple(torch.nonzero(~close)[0].tolist()) if mismatches else None
        metrics = expected_metrics(actual, expected, equal_nan, rtol, atol)
        observed = (got["mismatches"], got["first_mismatch_index"], got["max_abs"], got["max_rel"], got["max_ulp"])
        if observed != (mismatches, first, *metrics):
            disagreements.append(f"{case}: metrics {observed} != {(mismatches, first, *metrics)}")
    assert not disagreements, f"{len(disagreements)} of {PAIRS_PER_DTYPE} pairs disagree:\n" + "\n".join(disagreements[:10])
    # The generator must exercise both verdicts, on the boundary too, or the agreement means little.
    assert min(verdicts.values()) > PAIRS_PER_DTYPE // 10, verdicts
    assert min(boundary_verdicts.values()) > 50, boundary_verdicts


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_default_tolerances_are_assert_closes(parity, dtype):
    assert parity.default_tolerance(dtype) == torch.testing._comparison.default_tolerances(dtype)


def test_attribute_mismatches_fail_like_assert_close(parity):
    a = torch.zeros(2, 3)
    pairs = [
        (a, torch.zeros(3, 2), True, "shape"),
        (a, torch.zeros(2, 3, dtype=torch.float64), True, "dtype"),
        (torch.zeros(2, 3, dtype=torch.float16), a, True, "dtype"),
    ]
    for actual, expected, check_dtype, attribute in pairs:
        assert not torch_verdict(actual, expected, None, False, check_dtype)
        got = parity.compare(actual, expected, check_dtype=check_dtype)
        assert not got["passed"]
        assert f"attribute '{attribute}'" in got["reason"]


def test_dtype_promotion_when_dtype_check_is_off(parity):
    rng = random.Random("promotion")
    for _ in range(300):
        e = torch.tensor([rng.gauss(0, 1) for _ in range(4)], dtype=torch.float64)
        a_dtype = rng.choice(DTYPES)
        a = (e * (1 + rng.choice([0.0, 1e-7, 1e-5, 1e-3, 2e-2]))).to(a_dtype)
        want = torch_verdict(a, e, None, False, False)
        got = parity.compare(a, e, check_dtype=False)
        assert got["passed"] == want, (a, e, got)


def test_non_contiguous_inputs_report_logical_indices(parity):
    base = torch.zeros(4, 3)
    base[0, 2] = 1.0
    actual = base.t()
    got = parity.compare(actual, torch.zeros(3, 4))
    assert got["first_mismatch_index"] == tuple(torch.nonzero(actual)[0].tolist()) == (2, 0)


def test_lone_tolerance_is_rejected_like_assert_close(parity):
    with pytest.raises(ValueError):
        torch.testing.assert_close(torch.zeros(1), torch.zeros(1), rtol=1e-3)
    with pytest.raises(ValueError):
        parity.compare(torch.zeros(1), torch.zeros(1), rtol=1e-3)


def test_ulp_distance_matches_the_bits(parity):
    rng = random.Random("ulp")
    for dtype in DTYPES:
        for _ in range(200):
            x = torch.tensor([rng.gauss(0, 1) * rng.choice([1e-30, 1e-3, 1, 1e4])], dtype=torch.float64).to(dtype)
            k = rng.randint(-50, 50)
            y = step_ulps(x, k)
            if not torch.isfinite(y).all():
                continue
            assert parity.ulp_distance(float(x), float(y), dtype) == abs(k), (dtype, x, y, k)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_unfloored_ulp_error_is_in_units_of_the_expected_values_ulp(parity, dtype):
    """With floor 0 (atol = 0), max_ulp = |a - e| / ulp(e): a scaled relative error, for subnormals and
    across zero (not a count of the bit patterns in between)."""
    fi = torch.finfo(dtype)
    smallest_ulp = fi.eps * fi.tiny  # ulp of 0, of every subnormal and of the smallest normal
    subnormal = fi.tiny * fi.eps
    cases = [
        (1.0 + fi.eps, 1.0, 1.0),
        (-1.0, 1.0, 2.0 / fi.eps),                     # across zero: 2 / ulp(1), not ~2 * 2^(width-2) bit steps
        (subnormal, 0.0, 1.0),                          # zero's ulp is the subnormal spacing
        (3 * subnormal, subnormal, 2.0),                # subnormals: same spacing
        (-subnormal, subnormal, 2.0),                   # across zero among subnormals
        (fi.tiny + smallest_ulp, fi.tiny, 1.0),         # smallest normal
        (math.inf, math.inf, 0.0),
        (fi.max, math.inf, math.inf),
    ]
    for a, e, want in cases:
        a_t, e_t = torch.tensor([a], dtype=dtype), torch.tensor([e], dtype=dtype)
        assert parity.ulp_error(float(a_t), float(e_t), dtype, floor=0.0) == want, (dtype, a, e)
        got = parity.compare(a_t, e_t, rtol=1e30, atol=0.0) if math.isfinite(want) else parity.compare(a_t, e_t)
        assert got["ulp_floor"] == 0.0 or not math.isfinite(want)
        assert got["max_ulp"] == want, (dtype, a, e, got)
    assert parity.ulp_of(0.0, dtype) == parity.ulp_of(subnormal, dtype) == parity.ulp_of(fi.tiny, dtype) == smallest_ulp
    assert parity.ulp_of(-1.5, dtype) == parity.ulp_of(1.0, dtype) == fi.eps
    with pytest.raises(ValueError):
        parity.ulp_error(math.nan, 1.0, dtype, floor=0.0)


def test_ulp_error_of_values_near_1e_14_is_in_ulps_of_the_floor(parity):
    """The report once showed ulp 4.4e+18 for float64 values of order 1e-14 crossing zero: the
    count of bit patterns between them. In units of ulp(e) it is 2e-14 / 2^-99 ~ 1.3e16 (a relative
    error of 2 in units of eps), still huge for a pair that atol accepts. float64's default floor is
    1e-7 / 1e-7 = 1, so the figure is 2e-14 / ulp(1) ~ 90."""
    a, e = torch.tensor([-1e-14], dtype=torch.float64), torch.tensor([1e-14], dtype=torch.float64)
    got = parity.compare(a, e)
    assert got["passed"]  # atol accepts it
    assert got["ulp_floor"] == 1.0
    assert got["max_ulp"] == 2e-14 / 2.0 ** -52
    exact = parity.compare(a, e, rtol=0.0, atol=0.0)  # no atol, no floor
    assert not exact["passed"] and exact["max_ulp"] == 2e-14 / 2.0 ** -99
    # Unfloored against an exact zero the float64 quotient overflows: it saturates at the largest double.
    assert parity.compare(torch.tensor([1e-14], dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64),
                          rtol=0.0, atol=0.0)["max_ulp"] == sys.float_info.max
