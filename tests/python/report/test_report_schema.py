"""The validator (python -m crossdev.report.validate) and the schema table: every problem is named by file
and JSON path."""
import copy
import json
import subprocess
import sys

import pytest

from crossdev.report import sample
from crossdev.report.bundle import BundleError, load_bundle, parse_bundle
from crossdev.report.validate import main as validate_main


@pytest.fixture
def good():
    return sample.bundle("cuda", [sample.ops_case("rms_norm", "cuda", "float32", "fused"),
                                  sample.case("c", "context", status="xfail", message="known")])


def problems(doc):
    with pytest.raises(BundleError) as e:
        parse_bundle(json.dumps(doc), "b.json")
    return e.value.problems


def test_a_sample_bundle_is_valid(good):
    assert len(parse_bundle(json.dumps(good), "b.json").cases) == 2


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["cases"][1].update(status="passed"),
     "bundle.cases[1] (id 'c').status: expected one of pass, fail, xfail, xpass, skip, error, crash, got str 'passed'"),
    (lambda d: d["execution_target"].pop("simulated"), "bundle.execution_target: missing required field 'simulated'"),
    (lambda d: d["execution_target"].update(simulated="no"),
     "bundle.execution_target.simulated: expected true or false, got str 'no'"),
    (lambda d: d["cases"][0]["metrics"].update(max_ulp="1"),
     "bundle.cases[0] (id 'rms_norm.row/cuda/float32/small/fused').metrics.max_ulp: expected a number or null"),
    (lambda d: d["cases"][0].update(execution="emulated"), "bundle.cases[0] (id 'rms_norm.row/cuda/float32/small/fused')"
     ".execution: expected one of real, simulated, not_run"),
    (lambda d: d.update(schema="other.bundle"), "bundle.schema: expected one of crossdev.bundle"),
    (lambda d: d.update(schema_version=4), "bundle.schema_version: unsupported version 4 (this reader knows 1, 2, 3)"),
    (lambda d: d["summary"].update(total=5), "bundle.summary.total: 5 does not match the 2 case(s)"),
    (lambda d: d.update(benchmarks={"benchmarks": [{"real_time": 1}]}),
     "bundle.benchmarks.benchmarks[0]: missing required field 'name'"),
])
def test_each_schema_violation_is_named(good, mutate, expected):
    doc = copy.deepcopy(good)
    mutate(doc)
    assert any(p.startswith(expected) for p in problems(doc)), problems(doc)


def test_null_metrics_are_allowed_they_spell_nan_and_inf(good):
    good["cases"][0]["metrics"]["max_ulp"] = None
    assert parse_bundle(json.dumps(good), "b.json")


def test_cuda_kernels_is_an_optional_string(good):
    # A CUDA LibTorch's build says whether crossdev's CUDA kernels are in it (cmake/CrossdevCuda.cmake).
    assert "cuda_kernels" not in good["execution_target"]
    good["execution_target"]["cuda_kernels"] = "not built (no CUDA toolkit (nvcc) was found)"
    assert parse_bundle(json.dumps(good), "b.json")
    good["execution_target"]["cuda_kernels"] = False
    assert "bundle.execution_target.cuda_kernels: expected a string, got bool False" in problems(good), problems(good)


def test_non_json_numbers_and_truncation_are_reported_with_position(tmp_path, good):
    text = json.dumps(good, indent=1)
    nan = tmp_path / "nan.json"
    nan.write_text(text.replace('"max_ulp": 1.0', '"max_ulp": NaN'))
    with pytest.raises(BundleError, match=r"nan.json: not valid JSON: non-JSON number NaN"):
        load_bundle(nan)
    cut = tmp_path / "cut.json"
    cut.write_text(text[:200])
    with pytest.raises(BundleError, match=r"cut.json: \d+:\d+: not valid JSON \(the file is truncated\)"):
        load_bundle(cut)
    empty = tmp_path / "empty.json"
    empty.write_text("\n")
    with pytest.raises(BundleError, match="empty.json: empty file"):
        load_bundle(empty)


def test_validate_cli_exit_codes(tmp_path, good, capsys, repo_root):
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(good))
    bad = tmp_path / "bad.json"
    good["cases"][0]["status"] = "PASS"
    bad.write_text(json.dumps(good))
    assert validate_main([str(ok)]) == 0
    assert f"{ok}: ok (2 cases" in capsys.readouterr().out
    assert validate_main([str(ok), str(bad)]) == 2
    assert f"{bad}: bundle.cases[0]" in capsys.readouterr().err
    proc = subprocess.run([sys.executable, "-m", "crossdev.report.validate"], cwd=repo_root, capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "usage" in proc.stderr
