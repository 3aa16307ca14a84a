"""The scoreboard shows a ULP figure only where it informs (docs/parity.md, "ULP error"): finite and at
most 2^(mantissa bits) of the cell's dtype, which no passing case reaches under the floored figure.
Beyond that, or non-finite, a reference's line gives max_abs and max_rel, and the figure moves to the
tooltip. Version 1 bundles (unfloored figures, 1e32 and more on passing cases) render by the same rule."""
import html
import json
import re

import pytest

from crossdev.report import sample
from crossdev.report.parity import MANTISSA_BITS, ulp_informs
from crossdev.report.render import main as render_main
from crossdev.report.views.h import fmt_number


def cell_lines(tmp_path, doc):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "out"
    assert render_main([str(path), "--out", str(out)]) == 0
    board = re.search(r'id="scoreboard-table">(.*?)</table>', (out / "index.html").read_text(), re.S).group(1)
    return [html.unescape(m) for m in re.findall(r"<small[^>]*>(.*?)</small>", board)], board


def one_case(dtype, max_ulp, max_abs=0.0156, status="pass", version=2):
    doc = sample.bundle("cpu", [sample.ops_case("bias_dropout_add_scale", "cpu", dtype, "fused", status=status,
                                                max_abs=max_abs, max_ulp=max_ulp)])
    doc["schema_version"] = version
    # repr, not sample's %g: the boundary 2^52 must survive the text exactly
    doc["cases"][0]["details"]["golden out"] = (f"close: 64 elements, max_abs={max_abs!r}, max_rel={max_abs!r}, "
                                                f"max_ulp={max_ulp!r}, ulp_floor=0.01 (rtol=0.001, atol=1e-05)")
    return doc


@pytest.mark.parametrize("dtype", sorted(MANTISSA_BITS))
def test_the_figure_shows_up_to_2_to_the_mantissa_bits_and_not_beyond(tmp_path, dtype):
    bound = 2.0 ** MANTISSA_BITS[dtype]
    lines, _ = cell_lines(tmp_path / "at", one_case(dtype, bound))
    assert lines == [f"golden: ulp {fmt_number(bound)}, abs 0.0156"]
    above = bound * (1 + 2 ** -20)
    lines, board = cell_lines(tmp_path / "above", one_case(dtype, above))
    assert lines == ["golden: abs 0.0156, rel 0.0156"]
    assert f'title="ulp {fmt_number(above)} not shown: beyond 2^{MANTISSA_BITS[dtype]} ulps' in html.unescape(board)


def test_the_reports_passing_bfloat16_case_shows_abs_and_rel_not_5_7e32_ulp(tmp_path):
    """bias_dropout_add_scale.train/cpu/bfloat16/large/fused as a version 1 bundle had it."""
    lines, board = cell_lines(tmp_path, one_case("bfloat16", 5.7e32, version=1))
    assert lines == ["golden: abs 0.0156, rel 0.0156"]
    assert "ulp 5.7e+32" not in "".join(lines) and "ulp 5.7e+32 not shown" in html.unescape(board)


def test_a_failing_case_within_range_keeps_its_figure(tmp_path):
    lines, _ = cell_lines(tmp_path, one_case("float16", 12.0, max_abs=0.03, status="fail"))
    assert lines == ["golden: ulp 12, abs 0.03"]


def test_ulp_informs():
    assert ulp_informs(0.0, "float32") and ulp_informs(2.0 ** 23, "float32")
    assert not ulp_informs(2.0 ** 23 + 1, "float32") and ulp_informs(2.0 ** 23 + 1, "float64")
    assert not ulp_informs(float("inf"), "float64") and not ulp_informs(float("nan"), "float16")
    assert not ulp_informs(None, "float16")
    assert ulp_informs(1e300, "int64")  # integers: a ulp is 1, any finite figure is an abs error
