"""Every bundle the validator accepts renders; everything else is rejected as bad input (exit 2).

Issue 11 item 2: the renderer crashed (traceback, exit 1) on bundles that passed the validator: a
parity detail with max_abs=inf (a bundle crossdev itself wrote), metrics of 1e999, odd benchmark
fields and 100k-deep JSON. Non-finite numbers render as the text inf / -inf / nan; a null metric
(the writer's spelling of "non-finite, which one not recorded") renders as non-finite.
"""
import copy
import json
import re
import subprocess
import sys

import pytest

from crossdev.report import sample
from crossdev.report.bundle import BundleError, parse_bundle
from crossdev.report.render import main as render_main
from crossdev.report.validate import main as validate_main


def write_text(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def render(tmp_path, path):
    out = tmp_path / "out"
    rc = render_main([str(path), "--out", str(out)])
    return rc, {name: (out / name).read_text(encoding="utf-8") for name in ("index.html", "summary.md", "junit.xml")}


def ops_bundle(summary_text=None, metrics=None):
    case = sample.ops_case("gelu_tanh", "cpu", "float32", "fused", status="fail")
    if summary_text is not None:
        case["details"]["golden out"] = summary_text
    if metrics is not None:
        case["metrics"] = metrics
    return sample.bundle("cpu", [case])


def scoreboard(html):
    return re.search(r'id="scoreboard-table">(.*?)</table>', html, re.S).group(1)


def suites_section(html):
    return re.search(r'<section id="suites">(.*?)</section>', html, re.S).group(1)


# --- non-finite numbers -------------------------------------------------------------------------

def test_parity_detail_with_max_abs_inf_renders_as_inf(tmp_path):
    # What CROSSDEV_MUTANT=gelu_tanh.drop_vec_tail makes the C++ writer emit.
    text = "not close: 64 elements, max_abs=inf, max_rel=inf, max_ulp=inf (rtol=1.3e-06, atol=1e-05)"
    path = write_text(tmp_path / "b.json", json.dumps(ops_bundle(text)))
    rc, out = render(tmp_path, path)
    assert rc == 0
    assert "golden: abs inf, rel inf" in scoreboard(out["index.html"])  # a non-finite ULP figure is not shown


@pytest.mark.parametrize("spelling, shown", [("inf", "inf"), ("-inf", "-inf"), ("nan", "nan"), ("1e999", "inf"),
                                             ("-1e999", "-inf"), ("Infinity", "inf")])
def test_every_non_finite_spelling_in_details_renders_as_text(tmp_path, spelling, shown):
    text = f"not close: 64 elements, max_abs={spelling}, max_rel=0, max_ulp={spelling} (x)"
    rc, out = render(tmp_path, write_text(tmp_path / "b.json", json.dumps(ops_bundle(text))))
    assert rc == 0
    assert f"golden: abs {shown}, rel 0" in scoreboard(out["index.html"])
    assert f'title="ulp {shown} not shown' in scoreboard(out["index.html"])


def test_metrics_of_1e999_render_as_inf(tmp_path):
    doc = ops_bundle(metrics={"max_abs": 1.0, "max_rel": 2.0, "max_ulp": 3.0, "mismatches": 4})
    # 1e999 is a valid JSON number that overflows to an infinity when read.
    text = json.dumps(doc).replace('"max_abs": 1.0', '"max_abs": 1e999').replace('"max_rel": 2.0', '"max_rel": -1e999')
    path = write_text(tmp_path / "b.json", text)
    assert validate_main([str(path)]) == 0
    rc, out = render(tmp_path, path)
    assert rc == 0
    cases = suites_section(out["index.html"])
    assert "max_abs=inf" in cases and "max_rel=-inf" in cases and "mismatches=4" in cases


def test_null_metric_renders_as_non_finite(tmp_path):
    doc = ops_bundle(metrics={"max_abs": None, "max_ulp": None})
    doc["cases"][0]["details"] = {"op": "gelu_tanh", "dtype": "float32"}  # no per-reference details
    rc, out = render(tmp_path, write_text(tmp_path / "b.json", json.dumps(doc)))
    assert rc == 0
    assert "max_abs=non-finite" in suites_section(out["index.html"])
    assert "all references: abs non-finite, rel —" in scoreboard(out["index.html"])


def test_infinite_durations_and_benchmark_times_render(tmp_path):
    bench = sample.bench_json("cpu", {"gelu_tanh/fused/float32/1024": 100.0, "gelu_tanh/fallback/float32/1024": 400.0},
                              bw_util={"gelu_tanh/fused/float32/1024": 0.5})
    doc = sample.bundle("cpu", [sample.case("a", "context")], benchmarks=bench)
    text = json.dumps(doc).replace('"duration_s": 0.001', '"duration_s": 1e999')
    text = text.replace('"real_time": 400.0', '"real_time": 1e999').replace('"bw_util": 0.5', '"bw_util": 1e999')
    rc, out = render(tmp_path, write_text(tmp_path / "b.json", text))
    assert rc == 0
    assert "<svg" in out["index.html"] or "No benchmark" in out["index.html"]


# --- odd benchmark fields -------------------------------------------------------------------------

ODD_BENCH_FIELDS = [
    ("run_name", ["a", "b"], "bundle.benchmarks.benchmarks[0] (name 'x/fused/float32/1/cpu/fwd').run_name: "
                             "expected a string, got list"),
    ("run_name", 7, ".run_name: expected a string, got int 7"),
    ("aggregate_name", {"k": 1}, ".aggregate_name: expected a string, got dict"),
    ("aggregate_name", ["median"], ".aggregate_name: expected a string, got list"),
    ("time_unit", 3, ".time_unit: expected a string, got int 3"),
    ("bw_util", "high", ".bw_util: expected a number or null, got str 'high'"),
    ("bytes_per_second", [1], ".bytes_per_second: expected a number or null, got list"),
    ("error_occurred", "yes", ".error_occurred: expected true or false, got str 'yes'"),
]


@pytest.mark.parametrize("field, value, expected", ODD_BENCH_FIELDS, ids=[f"{f}={v!r}" for f, v, _ in ODD_BENCH_FIELDS])
def test_odd_benchmark_fields_are_rejected_by_name(tmp_path, capsys, field, value, expected):
    bench = sample.bench_json("cpu", {"x/fused/float32/1": 1.0, "x/fallback/float32/1": 2.0})
    bench["benchmarks"][0][field] = value
    path = write_text(tmp_path / "b.json", json.dumps(sample.bundle("cpu", [sample.case("a", "context")],
                                                                  benchmarks=bench)))
    assert validate_main([str(path)]) == 2
    assert expected in capsys.readouterr().err
    rc, out = render(tmp_path, path)  # bad input: named, exit 2, the report still written
    assert rc == 2 and str(path) in out["index.html"]


@pytest.mark.parametrize("entry", [
    {"name": "only/three/parts"},
    {"name": "a/b/c/d/e/f", "real_time": None},
    {"name": "a/fused/c/d/e/f", "real_time": 0, "time_unit": "parsec"},
    {"name": "a/fused/c/d/e/f", "run_name": "", "real_time": -5, "aggregate_name": "stddev"},
    {"name": "a/fallback/c/d/e/f", "real_time": 1e-300, "bw_util": 0.0, "bytes_per_second": 1e300},
    {"name": "a/fused/c/d/e/f", "real_time": 1e300, "bw_util": 5e-324, "bytes_per_second": 1e308},
    {"name": "a/fused/c/d/e/f", "error_occurred": True, "real_time": 1},
])
def test_unusual_but_valid_benchmark_entries_render(tmp_path, entry):
    bench = {"context": {}, "benchmarks": [dict(entry), {"name": "a/fallback/c/d/e/f", "real_time": 3.0}]}
    path = write_text(tmp_path / "b.json", json.dumps(sample.bundle("cpu", [sample.case("a", "context")],
                                                                  benchmarks=bench)))
    assert validate_main([str(path)]) == 0
    rc, _ = render(tmp_path, path)
    assert rc == 0


# --- what the validator must reject because nothing downstream can show it ------------------------

def problems_of(text):
    with pytest.raises(BundleError) as e:
        parse_bundle(text, "b.json")
    return e.value.problems


def deep(depth):
    good = json.dumps(sample.bundle("cpu", [sample.case("a", "context")]))
    return good[:-1] + ', "device_log": ' + '{"a": ' * depth + "null" + "}" * depth + "}"


@pytest.mark.parametrize("depth", [100_000, 5_000])
def test_deeply_nested_json_is_bad_input_not_a_crash(tmp_path, capsys, depth):
    path = write_text(tmp_path / "deep.json", deep(depth))
    assert any("nested too deeply" in p for p in problems_of(path.read_text()))
    assert validate_main([str(path)]) == 2
    assert f"{path}: " in capsys.readouterr().err
    rc, out = render(tmp_path, path)
    assert rc == 2 and "nested too deeply" in out["summary.md"]


def test_nesting_within_the_limit_is_fine():
    parse_bundle(deep(50), "b.json")


def test_integer_too_large_for_a_float_is_rejected():
    doc = ops_bundle()
    text = json.dumps(doc).replace('"mismatches": 0', '"mismatches": 1' + "0" * 400)
    assert any(p.startswith("bundle.cases[0] (id 'gelu_tanh.row/cpu/float32/small/fused').metrics.mismatches: "
                            "expected a number or null (within the float64 range)") for p in problems_of(text))


def test_negative_duration_is_rejected():
    doc = ops_bundle()
    doc["cases"][0]["duration_s"] = -1.5
    assert any(".duration_s: expected a non-negative number of seconds or null, got float -1.5" in p
               for p in problems_of(json.dumps(doc)))


@pytest.mark.parametrize("where", ["message", "key"])
def test_lone_surrogates_are_rejected(where):
    doc = ops_bundle()
    text = json.dumps(doc)
    if where == "message":
        text = text.replace('"message": "gelu_tanh', '"message": "\\ud800 gelu_tanh')
    else:
        text = text.replace('"max_abs"', '"max_\\udfff"', 1)
    assert any("lone UTF-16 surrogate" in p for p in problems_of(text))


def test_valid_surrogate_pairs_are_fine():
    doc = ops_bundle()
    doc["cases"][0]["message"] = "emoji \U0001F600"
    parse_bundle(json.dumps(doc, ensure_ascii=True), "b.json")


# --- the command lines: exit 0/1/2 only, never a traceback ------------------------------------------

@pytest.mark.parametrize("command", [["-m", "crossdev.report.validate"], ["-m", "crossdev", "report", "--out", "OUT"],
                                     ["-m", "crossdev", "gate"], ["-m", "crossdev.report", "--out", "OUT"],
                                     ["-m", "crossdev", "merge", "--out", "OUT"]])
def test_command_lines_exit_2_without_traceback_on_deep_json(tmp_path, repo_root, command):
    path = write_text(tmp_path / "deep.json", deep(100_000))
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    proc = subprocess.run([sys.executable, *args, str(path)], cwd=repo_root, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and f"{path}: " in proc.stderr


def test_command_lines_render_an_inf_bundle(tmp_path, repo_root):
    text = "not close: 64 elements, max_abs=inf, max_rel=inf, max_ulp=inf (x)"
    path = write_text(tmp_path / "b.json", json.dumps(ops_bundle(text)))
    proc = subprocess.run([sys.executable, "-m", "crossdev", "report", str(path), "--out", str(tmp_path / "o")],
                          cwd=repo_root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    gate = subprocess.run([sys.executable, "-m", "crossdev", "gate", str(path)], cwd=repo_root, capture_output=True,
                          text=True, timeout=120)
    assert gate.returncode == 1 and "Traceback" not in gate.stderr  # the case fails: a verdict, not a crash


def test_sample_bundles_are_unchanged_by_the_checks():
    for doc in sample.demo_bundles().values():
        parse_bundle(json.dumps(copy.deepcopy(doc)), "demo.json")


def test_render_replaces_its_three_outputs_as_one_set(tmp_path, monkeypatch):
    """A failure while writing any output leaves all three previous outputs untouched."""
    import os as _os
    from crossdev.report import atomic, render, sample
    bundle = tmp_path / "b.json"
    bundle.write_text(__import__("json").dumps(sample.bundle("cpu", [sample.case("r.a", "redirect")])))
    out = tmp_path / "out"
    out.mkdir()
    for name in ("index.html", "summary.md", "junit.xml"):
        (out / name).write_text("old " + name)
    real_replace = _os.replace
    calls = []

    def failing_fsync(fd):
        calls.append(fd)
        if len(calls) == 3:  # the third file fails before any rename
            raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", failing_fsync)
    assert render.run([str(bundle), "--out", str(out)]) == 2
    for name in ("index.html", "summary.md", "junit.xml"):
        assert (out / name).read_text() == "old " + name
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    monkeypatch.setattr(atomic.os, "replace", real_replace)
