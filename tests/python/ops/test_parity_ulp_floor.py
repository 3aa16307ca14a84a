"""The floored ULP error of crossdev.parity.compare (docs/parity.md, "ULP error"), computed again here
independently with numpy, and its bound.

    max_ulp = max |a - e| / ulp(max(|e|, floor)),   floor = atol / max(rtol, eps)

Here ulp(x) is numpy.spacing (bfloat16, which numpy lacks: torch.nextafter) of the power of two at or
below max(|x|, smallest normal): the gap above the start of x's binade, as the doc defines it. The C++
comparator divides by a power of two, so the two must agree exactly, on random arrays that mix zeros,
subnormals, values around the floor and large values, at default and extreme tolerances.

The bound: no element that passes |a - e| <= atol + rtol |e| (as torch.isclose decides it, in the dtype)
reaches 2^(mantissa bits) ulps, for rtol <= 1/5. The same pairs measured without the floor must break
it, or they would not be exercising what the floor is for.
"""
import math
import sys
import zlib

import numpy as np
import pytest
import torch

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
NUMPY = {torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64}
TOLERANCES = [None, (0.2, 0.0), (0.2, 1e-30), (0.2, 1.0), (0.0, 1e-3), (1e-12, 1e-6), (1e-3, 1e-5), (0.0, 0.0)]
ELEMENTS = 20_000


@pytest.fixture(scope="module")
def parity(crossdev_module):
    return crossdev_module.parity


def mantissa_bits(dtype):
    return -int(math.log2(torch.finfo(dtype).eps))  # eps = 2^-(mantissa bits)


def spacing_at(p2, dtype):
    """The gap above each power of two in p2 (float64 array), in dtype, as float64."""
    if dtype in NUMPY:
        return np.spacing(p2.astype(NUMPY[dtype])).astype(np.float64)
    t = torch.from_numpy(p2).to(dtype)
    return (torch.nextafter(t, torch.full_like(t, math.inf)).double() - t.double()).numpy()


def numpy_ulp(x, dtype):
    """ulp(x) of docs/parity.md: the spacing at the start of |x|'s binade; zero and subnormals take the
    smallest normal's (= the subnormal spacing)."""
    m = np.maximum(np.abs(x), torch.finfo(dtype).tiny)
    return spacing_at(np.ldexp(1.0, np.frexp(m)[1] - 1), dtype)


def numpy_floor(dtype, rtol, atol):
    return atol / max(rtol, torch.finfo(dtype).eps) if atol > 0 else 0.0


def numpy_ulp_error(a, e, dtype, floor):
    """Element-wise |a - e| / ulp(max(|e|, floor)); saturates at the largest double like the comparator."""
    err = np.abs(a - e)
    with np.errstate(over="ignore"):
        q = err / numpy_ulp(np.maximum(np.abs(e), floor), dtype)
    return np.where(np.isinf(q) & np.isfinite(err), sys.float_info.max, q)


def random_pairs(dtype, rng, rtol, atol):
    """expected: zeros, subnormals, values around the floor and far from it; actual: a few ulps off, a
    relative error, an absolute one up to 2 atol, the sign flipped, or equal. Both in dtype."""
    fi = torch.finfo(dtype)
    floor = numpy_floor(dtype, rtol, atol)
    kind = rng.integers(0, 6, ELEMENTS)
    magnitude = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3, kind == 4],
        [np.zeros(ELEMENTS),
         fi.tiny * fi.eps * rng.integers(1, 2 ** 10, ELEMENTS),         # subnormals
         fi.tiny * np.exp2(rng.uniform(0, 8, ELEMENTS)),                 # just above the smallest normal
         (floor or 1.0) * np.exp2(rng.uniform(-12, 4, ELEMENTS)),         # around the floor
         np.exp2(rng.uniform(-40, 12, ELEMENTS))],
        np.exp2(rng.uniform(-3, 3, ELEMENTS)))
    expected = torch.from_numpy(magnitude * rng.choice([-1.0, 1.0], ELEMENTS)).to(dtype).double().numpy()
    how = rng.integers(0, 5, ELEMENTS)
    ulp = numpy_ulp(expected, dtype)
    allowed = atol + rtol * np.abs(expected)
    actual = np.select(
        [how == 0, how == 1, how == 2, how == 3],
        [expected + rng.integers(-8, 9, ELEMENTS) * ulp,
         expected * (1 + rng.uniform(-2, 2, ELEMENTS) * max(rtol, fi.eps)),
         expected + rng.uniform(-2, 2, ELEMENTS) * allowed,
         -expected],
        expected)
    actual = torch.from_numpy(actual).to(dtype)
    finite = torch.isfinite(actual)
    return actual[finite], torch.from_numpy(expected).to(dtype)[finite]


def tolerance_of(dtype, tol):
    return torch.testing._comparison.default_tolerances(dtype) if tol is None else tol


@pytest.mark.parametrize("tol", TOLERANCES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_max_ulp_and_floor_equal_numpys(parity, dtype, tol):
    rtol, atol = tolerance_of(dtype, tol)
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {rtol} {atol}".encode()))
    actual, expected = random_pairs(dtype, rng, rtol, atol)
    got = parity.compare(actual, expected, rtol=rtol, atol=atol)
    floor = numpy_floor(dtype, rtol, atol)
    assert got["ulp_floor"] == floor == parity.ulp_floor(dtype, rtol, atol)
    figures = numpy_ulp_error(actual.double().numpy(), expected.double().numpy(), dtype, floor)
    assert got["max_ulp"] == figures.max(), (got["summary"], figures.max())
    # Element by element too, where the binding takes single values.
    for i in np.random.default_rng(0).choice(len(figures), 200, replace=False):
        a, e = float(actual[i]), float(expected[i])
        assert parity.ulp_error(a, e, dtype, floor=floor) == figures[i], (a, e, floor)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_no_passing_element_reaches_2_to_the_mantissa_bits(parity, dtype):
    bound = 2.0 ** mantissa_bits(dtype)
    unfloored_breaks_it = False
    for tol in TOLERANCES:
        rtol, atol = tolerance_of(dtype, tol)
        assert rtol <= 0.2  # the proof's premise
        rng = np.random.default_rng(len(str(tol)) + mantissa_bits(dtype))
        actual, expected = random_pairs(dtype, rng, rtol, atol)
        passing = torch.isclose(actual, expected, rtol=rtol, atol=atol)
        assert int(passing.sum()) > ELEMENTS // 4, (tol, int(passing.sum()))
        a, e = actual[passing], expected[passing]
        got = parity.compare(a, e, rtol=rtol, atol=atol)
        assert got["passed"], got["summary"]
        floored = numpy_ulp_error(a.double().numpy(), e.double().numpy(), dtype, numpy_floor(dtype, rtol, atol))
        assert floored.max() < bound and got["max_ulp"] < bound, (tol, got["summary"])
        unfloored = numpy_ulp_error(a.double().numpy(), e.double().numpy(), dtype, 0.0)
        unfloored_breaks_it = unfloored_breaks_it or unfloored.max() >= bound
    assert unfloored_breaks_it, "the pairs never stress the floor: the bound above proves nothing"


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_numpys_ulp_is_the_docs(dtype):
    """The reference itself, against hand values: ulp(1) = eps, ulp(3) = 2 eps, ulp(0) = ulp(subnormal) =
    tiny * eps, ulp(0.75) = eps / 2."""
    fi = torch.finfo(dtype)
    got = numpy_ulp(np.array([1.0, 3.0, 0.0, fi.tiny * fi.eps * 3, 0.75, -1.5]), dtype)
    assert got.tolist() == [fi.eps, 2 * fi.eps, fi.tiny * fi.eps, fi.tiny * fi.eps, fi.eps / 2, fi.eps]
