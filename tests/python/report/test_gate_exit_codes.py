"""`crossdev gate`: 0 pass, 1 on fail/xpass/error/crash (not xfail or skip), 2 on bad input."""
import json
import subprocess
import sys

import pytest

from crossdev.report import sample


def gate(repo_root, *args):
    proc = subprocess.run([sys.executable, "-m", "crossdev", "gate", *map(str, args)], cwd=repo_root,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def bundle_with(tmp_path, name, *statuses, device_kind="cpu"):
    cases = [sample.case(f"{name}.{i}", "context", status=s, message=f"{s} reason") for i, s in enumerate(statuses)]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(sample.bundle(device_kind, cases, host=name)))
    return path


def test_passes_xfails_and_skips_do_not_gate(tmp_path, repo_root):
    rc, out, _ = gate(repo_root, bundle_with(tmp_path, "a", "pass", "xfail", "skip"),
                      bundle_with(tmp_path, "b", "pass", device_kind="cuda"))
    assert rc == 0, out
    assert "1 xfail (allowed), 0 gating" in out and "gate: PASS" in out


@pytest.mark.parametrize("status", ["fail", "xpass", "error", "crash"])
def test_each_gating_status_fails_the_job(tmp_path, repo_root, status):
    rc, out, _ = gate(repo_root, bundle_with(tmp_path, "ok", "pass"), bundle_with(tmp_path, "bad", "pass", status))
    assert rc == 1, out
    assert f"GATE cpu@bad: bad.1: {status} (real) at matrices/context.yaml:1: {status} reason" in out


def test_bad_input_is_exit_2_and_still_lists_failures(tmp_path, repo_root):
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"schema": "crossdev.bundle", "cases": [')
    rc, out, err = gate(repo_root, bundle_with(tmp_path, "bad", "fail"), corrupt)
    assert rc == 2
    assert f"{corrupt}: 1:" in err and "truncated" in err
    assert "GATE cpu@bad: bad.0: fail" in out


def test_usage_errors_are_exit_2(tmp_path, repo_root):
    assert gate(repo_root)[0] == 2
    good = bundle_with(tmp_path, "a", "pass")
    assert gate(repo_root, good, "--bench-threshold", "-1")[0] == 2


def test_perf_baseline_without_benchmarks_in_bundle_fails_closed(tmp_path, repo_root):
    """--baseline-bench with bundles that carry no benchmarks must not pass silently."""
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(sample.bench_json("cpu", {"x/fused/float32/1": 1.0})))
    rc, _, err = gate(repo_root, bundle_with(tmp_path, "a", "pass"), "--baseline-bench", baseline)
    assert rc == 2 and "performance cannot be gated" in err


def test_missing_perf_baseline_is_bad_input(tmp_path, repo_root):
    """Exit 2, naming the file and what was expected there."""
    rc, out, err = gate(repo_root, bundle_with(tmp_path, "a", "pass"), "--baseline-bench", tmp_path / "none.json")
    assert rc == 2, out + err
    assert f"crossdev gate: error: {tmp_path / 'none.json'}: no such file: --baseline-bench expected a Google " \
           "Benchmark JSON file" in err
    assert "gate: BAD INPUT (exit 2)" in out and "Traceback" not in err


def test_a_baseline_that_is_not_benchmark_json_is_bad_input(tmp_path, repo_root):
    """A baseline that exists but is no benchmark output: named, with what was expected."""
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    doc = sample.bundle("cpu", [sample.case("a", "context")], benchmarks=bench_with_repetitions(100.0))
    current = tmp_path / "current.json"
    current.write_text(json.dumps(doc))
    rc, out, err = gate(repo_root, current, "--baseline-bench", other)
    assert rc == 2, out + err
    assert f"{other}: expected a Google Benchmark JSON object with a `benchmarks` list" in err


def bench_with_repetitions(ns_per_iteration, repetitions=9):
    """Google Benchmark JSON with `repetitions` samples of one benchmark (bench_gate's U test needs them)."""
    name = "rms_norm/fused/float32/4096/cpu/fwd"
    runs = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": repetitions,
             "repetition_index": i, "iterations": 100, "real_time": ns_per_iteration * (1 + 0.001 * i),
             "cpu_time": ns_per_iteration * (1 + 0.001 * i), "time_unit": "ns"} for i in range(repetitions)]
    return {"context": {"host_name": "sample"}, "benchmarks": runs}


@pytest.mark.parametrize("current_ns, expected", [(100.0, 0), (200.0, 1)])
def test_perf_regression_is_delegated_to_bench_gate(tmp_path, repo_root, current_ns, expected):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(bench_with_repetitions(100.0)))
    doc = sample.bundle("cpu", [sample.case("a", "context")], benchmarks=bench_with_repetitions(current_ns))
    current = tmp_path / "current.json"
    current.write_text(json.dumps(doc))
    rc, out, err = gate(repo_root, current, "--baseline-bench", baseline, "--bench-threshold", "0.05")
    assert rc == expected, out + err


def test_a_bundle_with_no_cases_is_bad_input(tmp_path, repo_root):
    """Issue 11: an empty selection is not a pass. The bundle is named; the other bundles still gate."""
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(sample.bundle("cpu", [], host="empty")))
    rc, out, err = gate(repo_root, bundle_with(tmp_path, "a", "pass"), empty)
    assert rc == 2, out + err
    assert f"crossdev gate: error: {empty}: the bundle has no cases (expected at least one: an empty selection " \
           "runs nothing and proves nothing)" in err
    assert "gate: BAD INPUT (exit 2)" in out
    assert gate(repo_root, empty)[0] == 2
