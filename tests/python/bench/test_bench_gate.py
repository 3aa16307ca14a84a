"""`crossdev bench-gate` (crossdev.bench_gate) on synthetic baseline/current pairs: each verdict, each exit code.

The samples are drawn from seeded generators around known medians, so every pair has a known
answer (a 30% slowdown with 10 repetitions is significant; two draws of one distribution are not).
"""
import json
import random
import subprocess
import sys

import pytest

import crossdev.bench_gate as bench_gate

GATE = [sys.executable, "-m", "crossdev", "bench-gate"]


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def gbench_json(series, time_unit="us", aggregates=True):
    """Google Benchmark JSON: {name: [real_time per repetition]} -> iteration entries (+ aggregates)."""
    benchmarks = []
    for family, (name, times) in enumerate(series.items()):
        for i, t in enumerate(times):
            benchmarks.append({"name": name, "family_index": family, "per_family_instance_index": 0,
                               "run_name": name, "run_type": "iteration", "repetitions": len(times),
                               "repetition_index": i, "threads": 1, "iterations": 100, "real_time": t,
                               "cpu_time": t, "time_unit": time_unit})
        if aggregates and len(times) > 1:
            benchmarks.append({"name": name + "_mean", "run_name": name, "run_type": "aggregate",
                               "aggregate_name": "mean", "repetitions": len(times), "threads": 1,
                               "iterations": len(times), "real_time": sum(times) / len(times),
                               "cpu_time": sum(times) / len(times), "time_unit": time_unit})
    return {"context": {"date": "synthetic"}, "benchmarks": benchmarks}


def draws(seed, median, n, noise=0.03):
    rng = random.Random(seed)
    return [median * (1 + rng.uniform(-noise, noise)) for _ in range(n)]


def run_gate(tmp_path, baseline, current, *extra):
    """The gate's main() in this process (scipy is imported once); exit code and output as from the CLI."""
    base, cur = tmp_path / "baseline.json", tmp_path / "current.json"
    for path, doc in ((base, baseline), (cur, current)):
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    verdict, md = tmp_path / "verdict.json", tmp_path / "verdict.md"
    for stale in (verdict, md):
        stale.unlink(missing_ok=True)
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = bench_gate.main(["--baseline", str(base), str(cur), "--verdict-json", str(verdict),
                                    "--markdown", str(md), *extra])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    proc = Result(code, out.getvalue(), err.getvalue())
    doc = json.loads(verdict.read_text()) if verdict.exists() else None
    return proc, doc, (md.read_text() if md.exists() else None)


def verdicts(doc):
    return {b["name"]: b["verdict"] for b in doc["runs"][0]["benchmarks"]}


def test_clear_regression_exits_1(tmp_path):
    base = gbench_json({"op/fused/float32/8M/cpu/fwd": draws(1, 100.0, 10), "other": draws(2, 50.0, 10)})
    cur = gbench_json({"op/fused/float32/8M/cpu/fwd": draws(3, 130.0, 10), "other": draws(4, 50.0, 10)})
    proc, doc, md = run_gate(tmp_path, base, cur)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert doc["schema"] == "crossdev.bench_gate" and doc["verdict"] == "regression"
    assert verdicts(doc) == {"op/fused/float32/8M/cpu/fwd": "regression", "other": "unchanged"}
    entry = doc["runs"][0]["benchmarks"][0]
    assert entry["change"] == pytest.approx(0.30, abs=0.05) and entry["pvalue"] < 0.05
    assert entry["repetitions"] == [10, 10]
    assert "| `op/fused/float32/8M/cpu/fwd` | regression |" in md


def test_noise_only_passes(tmp_path):
    base = gbench_json({"a": draws(10, 100.0, 12, noise=0.05)})
    cur = gbench_json({"a": draws(11, 100.0, 12, noise=0.05)})
    proc, doc, _ = run_gate(tmp_path, base, cur)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdicts(doc) == {"a": "unchanged"} and doc["verdict"] == "pass"


def test_improvement_passes_and_is_named(tmp_path):
    proc, doc, _ = run_gate(tmp_path, gbench_json({"a": draws(5, 100.0, 9)}), gbench_json({"a": draws(6, 60.0, 9)}))
    assert proc.returncode == 0
    assert verdicts(doc) == {"a": "improvement"}
    assert doc["runs"][0]["benchmarks"][0]["change"] < -0.3


def test_significant_but_below_threshold_is_not_a_regression(tmp_path):
    # 3% slower with almost no noise: the U test is certain, the threshold (5%) says it does not matter.
    base = gbench_json({"a": draws(7, 100.0, 10, noise=0.001)})
    cur = gbench_json({"a": draws(8, 103.0, 10, noise=0.001)})
    proc, doc, _ = run_gate(tmp_path, base, cur)
    assert proc.returncode == 0 and verdicts(doc) == {"a": "unchanged"}
    assert doc["runs"][0]["benchmarks"][0]["pvalue"] < 0.05
    # ...and a tighter threshold turns the same data into a regression.
    proc, doc, _ = run_gate(tmp_path, base, cur, "--threshold", "0.01")
    assert proc.returncode == 1 and verdicts(doc) == {"a": "regression"}


@pytest.mark.parametrize("n", [1, 2, 3])
def test_too_few_repetitions_never_fail(tmp_path, n):
    # Even a 2x slowdown cannot be significant at alpha 0.05 with 3 or fewer samples per side.
    proc, doc, _ = run_gate(tmp_path, gbench_json({"a": draws(1, 100.0, n)}), gbench_json({"a": draws(2, 200.0, n)}))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdicts(doc) == {"a": "insufficient_repetitions"}


def test_four_repetitions_are_enough_for_a_clear_regression(tmp_path):
    proc, doc, _ = run_gate(tmp_path, gbench_json({"a": draws(1, 100.0, 4)}), gbench_json({"a": draws(2, 200.0, 4)}))
    assert proc.returncode == 1 and verdicts(doc) == {"a": "regression"}


def test_time_units_are_normalised(tmp_path):
    times = draws(3, 100.0, 10)
    base = gbench_json({"a": times}, time_unit="us")
    cur = gbench_json({"a": [t * 1000 for t in draws(4, 100.0, 10)]}, time_unit="ns")
    proc, doc, _ = run_gate(tmp_path, base, cur)
    assert proc.returncode == 0 and verdicts(doc) == {"a": "unchanged"}


def test_missing_new_and_errored_benchmarks_are_reported_not_failed(tmp_path):
    base = gbench_json({"gone": draws(1, 10.0, 5), "kept": draws(2, 10.0, 5), "broken": draws(5, 10.0, 5)})
    cur = gbench_json({"kept": draws(3, 10.0, 5), "added": draws(4, 10.0, 5)})
    cur["benchmarks"].append({"name": "broken", "run_type": "iteration", "error_occurred": True,
                              "error_message": "not run: NotEligible"})
    proc, doc, _ = run_gate(tmp_path, base, cur)
    assert proc.returncode == 0
    assert verdicts(doc) == {"gone": "missing", "kept": "unchanged", "broken": "error", "added": "new"}


def test_bundle_embedding_the_bench_json_is_accepted(tmp_path):
    base = gbench_json({"a": draws(1, 100.0, 10)})
    bundle = {"schema": "crossdev.bundle", "schema_version": 1, "benchmarks": gbench_json({"a": draws(2, 150.0, 10)})}
    proc, doc, _ = run_gate(tmp_path, base, bundle)
    assert proc.returncode == 1 and verdicts(doc) == {"a": "regression"}


def test_malformed_json_exits_2_naming_file_and_line(tmp_path):
    proc, doc, _ = run_gate(tmp_path, gbench_json({"a": [1.0]}), '{"benchmarks": [\n  {"name": "a",,}\n]}')
    assert proc.returncode == 2
    assert f"{tmp_path / 'current.json'}:2:" in proc.stderr and "invalid JSON" in proc.stderr
    assert doc is None


@pytest.mark.parametrize("current, expected", [
    ({"benchmarks": [{"name": "a", "cpu_time": 1, "time_unit": "us"}]}, "missing key 'real_time'"),
    ({"benchmarks": [{"name": "a", "real_time": 1, "cpu_time": 1, "time_unit": "fortnights"}]}, "time_unit"),
    ({"benchmarks": [{"name": "a", "real_time": "fast", "cpu_time": 1, "time_unit": "us"}]}, "finite number"),
    ({"benches": []}, "expected a Google Benchmark JSON object"),
    ({"schema": "crossdev.bundle", "benchmarks": None}, "embeds no benchmark results"),
])
def test_schema_errors_exit_2_naming_the_file(tmp_path, current, expected):
    proc, _, _ = run_gate(tmp_path, gbench_json({"a": [1.0]}), current)
    assert proc.returncode == 2, proc.stdout
    assert str(tmp_path / "current.json") in proc.stderr and expected in proc.stderr


def test_cli_exit_codes(tmp_path):
    """The real command line: 1 on a regression, 2 on a missing file or a bad option."""
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    base.write_text(json.dumps(gbench_json({"a": draws(1, 100.0, 6)})))
    cur.write_text(json.dumps(gbench_json({"a": draws(2, 180.0, 6)})))
    proc = subprocess.run([*GATE, "--baseline", str(base), str(cur)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "regression" in proc.stdout


def test_missing_file_and_bad_options_exit_2(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(gbench_json({"a": [1.0]})))
    proc = subprocess.run([*GATE, "--baseline", str(tmp_path / "nope.json"), str(good)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "nope.json" in proc.stderr
    proc = subprocess.run([*GATE, "--baseline", str(good), str(good), "--threshold", "-1"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "--threshold" in proc.stderr


def test_noisy_figures_are_not_judged_and_say_so(tmp_path):
    """A 30% slowdown whose repetitions vary by ~17% (CV) is noisy: not a regression, and the reason says
    what the U test and threshold alone would have said. The same slowdown with steady repetitions fails."""
    base = draws(1, 1000.0, 10)
    noisy_current = draws(2, 1300.0, 10, noise=0.3)
    steady_current = draws(3, 1300.0, 10)
    proc, doc, md = run_gate(tmp_path, gbench_json({"op/fused/a": base, "op/fused/b": base}),
                             gbench_json({"op/fused/a": noisy_current, "op/fused/b": steady_current}))
    assert proc.returncode == 1  # b is a regression
    assert verdicts(doc) == {"op/fused/a": "noisy", "op/fused/b": "regression"}
    (a,) = [b for b in doc["runs"][0]["benchmarks"] if b["name"] == "op/fused/a"]
    assert a["cv"] > 0.05 and "not judged" in a["reason"] and "would say regression" in a["reason"]
    assert doc["max_cv"] == 0.05 and "noisy above CV 5%" in md
    proc, doc, _ = run_gate(tmp_path, gbench_json({"op/fused/a": base}), gbench_json({"op/fused/a": noisy_current}))
    assert proc.returncode == 0 and doc["verdict"] == "pass" and doc["counts"] == {"noisy": 1}
    # A looser --max-cv judges the same figures.
    proc, doc, _ = run_gate(tmp_path, gbench_json({"op/fused/a": base}), gbench_json({"op/fused/a": noisy_current}),
                            "--max-cv", "0.5")
    assert proc.returncode == 1 and verdicts(doc) == {"op/fused/a": "regression"}


def test_bad_max_cv_exits_2(tmp_path):
    proc, _, _ = run_gate(tmp_path, gbench_json({"a": [1.0]}), gbench_json({"a": [1.0]}), "--max-cv", "0")
    assert proc.returncode == 2 and "--max-cv" in proc.stderr
