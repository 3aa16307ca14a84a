"""`crossdev bench-gate` (crossdev.bench_gate) on synthetic baseline/current pairs: each verdict, each exit code.

The samples are drawn from seeded generators around known medians, so every pair has a known
answer (a 30% slowdown with 10 repetitions is significant; two draws of one distribution are not).
"""
import json
import random
import re
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


# The relative rule (issue 52): a row is judged against the run's drift, the median change of its anchor rows
# (the same run's ATen and torch.compile peers and the STREAM triad), and against the run-to-run spread of
# every row. Each forgiving case below comes with the case it must still catch.

OPS = ("rms_norm", "swiglu", "gelu_tanh")
IMPLS = ("fused.out", "fused", "fallback", "aten", "compile")


def make_report_run(seed, drift=1.0, factors=None, row_noise=0.0, rep_noise=0.01):
    """Rows shaped like make report's: every op x impl x size x pass (fused.out fwd only) and the triad at each
    size, 5 repetitions each. Every row is scaled by `drift` (the host), by its own seeded factor within
    +-row_noise (run-to-run spread), and by factors[name prefix] (a kernel made slower)."""
    rng = random.Random(seed)
    factors = factors or {}
    series = {}
    for size, elements in (("1M", 1.0), ("8M", 8.0)):
        for impl in ("aten.out", "aten"):
            series[f"stream_triad/{impl}/float32/{size}/cpu/fwd"] = 100.0 * elements
        for op in OPS:
            for pass_ in ("fwd", "fwd_bwd"):
                for k, impl in enumerate(IMPLS):
                    if impl == "fused.out" and pass_ == "fwd_bwd":
                        continue
                    series[f"{op}/{impl}/float32/{size}/cpu/{pass_}"] = (200.0 + 30 * k) * elements * (
                        2.5 if pass_ == "fwd_bwd" else 1.0)
    out = {}
    for name, median in series.items():
        factor = drift * (1 + rng.uniform(-row_noise, row_noise))
        for prefix, f in factors.items():
            if name.startswith(prefix):
                factor *= f
        out[name] = draws(rng.randrange(10 ** 6), median * factor, 5, noise=rep_noise)
    return gbench_json(out)


def flagged(doc):
    return {b["name"]: b["verdict"] for b in doc["runs"][0]["benchmarks"] if b["verdict"] in ("regression", "improvement")}


def test_a_uniform_drift_of_every_row_is_not_flagged(tmp_path):
    """The host 30% slower for the whole run: the anchors move with the kernels and the ratio stays."""
    proc, doc, md = run_gate(tmp_path, make_report_run(1), make_report_run(2, drift=1.3))
    assert proc.returncode == 0, proc.stdout
    assert flagged(doc) == {} and doc["schema_version"] == 2 and doc["drift"] == "relative"
    drift = doc["runs"][0]["drift"]
    assert drift["mode"] == "relative" and drift["shift"] == pytest.approx(0.3, abs=0.02) and drift["anchors"] == 28
    row = doc["runs"][0]["benchmarks"][0]
    assert row["change"] == pytest.approx(0.3, abs=0.05) and abs(row["relative_change"]) < 0.05
    assert row["absolute_verdict"] == "regression"  # what the absolute rule says, kept beside the verdict
    assert "| vs drift |" in md and "drift +" in md
    # The absolute rule (schema v1's) is still there: it flags every row.
    proc, doc, _ = run_gate(tmp_path, make_report_run(1), make_report_run(2, drift=1.3), "--drift", "absolute")
    assert proc.returncode == 1 and set(flagged(doc).values()) == {"regression"}
    assert len(flagged(doc)) == len(doc["runs"][0]["benchmarks"]) and doc["runs"][0]["drift"]["mode"] == "absolute"


@pytest.mark.parametrize("row_noise", [0.0, 0.1])
def test_one_ops_fused_rows_twice_as_slow_under_the_same_drift_are_flagged(tmp_path, row_noise):
    """...but a kernel twice as slow under that drift is flagged: every fused row of that op, and nothing else,
    also when every row moves by up to +-10% of its own between the runs (this idle host's spread was +-4.7% to
    +-6.4% between two make-report runs: docs/benchmarks.md, "Two make-report bundles")."""
    slowed = {"rms_norm/fused.out/": 2.0, "rms_norm/fused/": 2.0}
    base = make_report_run(1, row_noise=row_noise)
    proc, doc, _ = run_gate(tmp_path, base, make_report_run(2, drift=1.3, factors=slowed, row_noise=row_noise))
    assert proc.returncode == 1, proc.stdout
    expected = {n for n in verdicts(doc) if n.startswith(("rms_norm/fused.out/", "rms_norm/fused/"))}
    assert len(expected) == 6 and flagged(doc) == {n: "regression" for n in expected}
    # The same spread without the slowed kernel flags nothing.
    proc, doc, _ = run_gate(tmp_path, base, make_report_run(3, drift=1.3, row_noise=row_noise))
    assert proc.returncode == 0 and flagged(doc) == {}, proc.stdout


def test_a_slowed_anchor_is_flagged(tmp_path):
    """An anchor cannot see its own regression (ATen's rms_norm over ATen's rms_norm): the drift is the median
    of every anchor row, so one op's ATen rows twice as slow stand out of it and are flagged."""
    proc, doc, _ = run_gate(tmp_path, make_report_run(1), make_report_run(2, drift=1.3, factors={"rms_norm/aten/": 2.0}))
    assert proc.returncode == 1, proc.stdout
    assert flagged(doc) == {n: "regression" for n in verdicts(doc) if n.startswith("rms_norm/aten/")}
    assert len(flagged(doc)) == 4
    # ...and so is the triad, the roofline anchor, at one size.
    proc, doc, _ = run_gate(tmp_path, make_report_run(1),
                            make_report_run(2, drift=1.3, factors={"stream_triad/aten.out/float32/8M/": 2.0}))
    assert flagged(doc) == {"stream_triad/aten.out/float32/8M/cpu/fwd": "regression"}


def test_a_run_to_run_spread_too_large_judges_nothing_and_says_so(tmp_path):
    """Rows that each move by up to +-90% between two runs of one build (this host under load): no difference is
    judged (noisy), not even a slowed kernel's, and the reason names the spread; --max-spread loosens it. The case
    it must still catch is above: a spread of +-25% judges, and flags the slowed kernel."""
    slowed = {"rms_norm/fused.out/": 2.0, "rms_norm/fused/": 2.0}
    proc, doc, md = run_gate(tmp_path, make_report_run(1, row_noise=0.9),
                             make_report_run(2, factors=slowed, row_noise=0.9))
    assert proc.returncode == 0 and flagged(doc) == {}
    assert doc["runs"][0]["drift"]["spread"] > 0.5
    assert all(b["verdict"] == "noisy" and "run-to-run spread" in b["reason"] for b in doc["runs"][0]["benchmarks"])
    assert "above ±50%: no row is judged" in md
    # A looser --max-spread judges the same runs (within their wide margins).
    proc, doc, _ = run_gate(tmp_path, make_report_run(1, row_noise=0.9), make_report_run(2, factors=slowed, row_noise=0.9),
                            "--max-spread", "5")
    assert doc["max_spread"] == 5 and not any("> 500%: not judged" in b["reason"] for b in doc["runs"][0]["benchmarks"])


def test_a_row_alone_is_not_judged_but_its_op_is(tmp_path):
    """A row that moved alone is not judged: its repetitions varying by more than --max-cv (the stall of one row, 4x
    slower, CV 20%), nor steady (two processes of one build put single rows in modes up to 2x apart on this host:
    docs/benchmarks.md, "Two make-report bundles"). Its must-catch: the rows of an op/impl that moved together,
    each 4x, are flagged."""
    base = make_report_run(1)
    cur = make_report_run(2, drift=1.3)
    name = "swiglu/fallback/float32/1M/cpu/fwd"
    cur_rows = {e["name"]: e for e in cur["benchmarks"]}
    noisy = draws(9, 4 * 1.3 * 260.0, 5, noise=0.35)
    for e in cur["benchmarks"]:
        if e["name"] == name and e["run_type"] == "iteration":
            e["real_time"] = e["cpu_time"] = noisy[e["repetition_index"]]
    assert name in cur_rows
    proc, doc, _ = run_gate(tmp_path, base, cur)
    row = next(b for b in doc["runs"][0]["benchmarks"] if b["name"] == name)
    assert row["verdict"] == "noisy" and row["cv"] > 0.05 and row["relative_change"] > 2, row
    assert proc.returncode == 0 and flagged(doc) == {}
    # A steady row as far out, alone: not judged either, and the reason says why.
    steady = draws(9, 4 * 1.3 * 260.0, 5, noise=0.01)
    for e in cur["benchmarks"]:
        if e["name"] == name and e["run_type"] == "iteration":
            e["real_time"] = e["cpu_time"] = steady[e["repetition_index"]]
    proc, doc, _ = run_gate(tmp_path, base, cur)
    row = next(b for b in doc["runs"][0]["benchmarks"] if b["name"] == name)
    assert row["verdict"] == "noisy" and row["cv"] <= 0.05 and "alone" in row["reason"], row
    assert proc.returncode == 0 and flagged(doc) == {}
    # Every row of its op/impl 4x slower: each is flagged, and nothing else.
    proc, doc, _ = run_gate(tmp_path, base, scaled(make_report_run(2, drift=1.3), r"^swiglu/fallback/", 4.0))
    assert proc.returncode == 1
    assert flagged(doc) == {n: "regression" for n in verdicts(doc) if n.startswith("swiglu/fallback/")}
    assert len(flagged(doc)) == 4


def scaled(doc, pattern, factor):
    """Every repetition of the benchmarks whose name matches `pattern`, `factor` times slower."""
    return {**doc, "benchmarks": [dict(e, real_time=e["real_time"] * factor, cpu_time=e["cpu_time"] * factor)
                                  if re.search(pattern, e["name"]) else e for e in doc["benchmarks"]]}


def test_a_stall_of_one_case_is_not_judged_but_a_slowed_kernel_still_is(tmp_path):
    """This VM stalls for seconds: every impl of the case timed then (rms_norm 1M fwd here, in the baseline) is
    20x slower, steadily. A row whose own case's anchor (ATen, torch.compile) moved as far the same way is not
    judged and does not speak for its op/impl. The slowed kernel's rows in the other cases are still flagged."""
    stall = r"^rms_norm/[^/]+/float32/1M/cpu/fwd$"
    base = scaled(make_report_run(1), stall, 20.0)
    proc, doc, _ = run_gate(tmp_path, base, make_report_run(2, drift=1.3))
    assert proc.returncode == 0 and flagged(doc) == {}, proc.stdout
    rows = {b["name"]: b for b in doc["runs"][0]["benchmarks"]}
    fused = rows["rms_norm/fused/float32/1M/cpu/fwd"]
    # Not judged, and left out of its op/impl's median: rms_norm/fused has 4 rows, 3 of them speak for it.
    assert fused["verdict"] == "noisy" and fused["relative_change"] < -0.9 and "over its 3 rows" in fused["reason"]
    assert rows["rms_norm/aten/float32/1M/cpu/fwd"]["verdict"] == "noisy"  # the anchors of that case too
    slowed = {"rms_norm/fused.out/": 2.0, "rms_norm/fused/": 2.0}
    proc, doc, _ = run_gate(tmp_path, base, make_report_run(2, drift=1.3, factors=slowed))
    assert proc.returncode == 1
    # fused's three other rows; fused.out has two rows, one of them in the stalled case: the other one is alone.
    assert flagged(doc) == {n: "regression" for n in rows if n.startswith("rms_norm/fused/") and not re.search(stall, n)}
    assert len(flagged(doc)) == 3


def test_one_wild_row_does_not_carry_a_quiet_one_of_its_op(tmp_path, monkeypatch):
    """Measured (docs/benchmarks.md, round m4): the allocating triad's 1M row, stalled in some repetitions of both
    runs (CV above 100%, p = 0.84), 11x slower by its medians, and its 8M row 1.5x slower; the median of a group
    of two is their mean, so the group moved 4x. The 8M row is carried only if it passes the group's margin itself. Its must-catch: the
    slowed kernel's rows, each 2x, are carried (test_one_ops_fused_rows_twice_as_slow_under_the_same_drift)."""
    base, cur = make_report_run(1, row_noise=0.25), make_report_run(2, row_noise=0.25)
    for doc, wild in ((base, [100, 105, 95, 2000, 3000]), (cur, [1100, 90, 1200, 1000, 4000])):  # stalls, both runs
        for e in doc["benchmarks"]:
            if e["name"] == "stream_triad/aten/float32/1M/cpu/fwd" and e["run_type"] == "iteration":
                e["real_time"] = e["cpu_time"] = float(wild[e["repetition_index"]])
    cur = scaled(cur, r"^stream_triad/aten/float32/8M/", 1.5)
    proc, doc, _ = run_gate(tmp_path, base, cur)
    assert proc.returncode == 0 and flagged(doc) == {}, proc.stdout  # the wild row is out of the median (CV)
    monkeypatch.setattr(bench_gate, "GROUP_CV_FACTOR", 1e9)  # ...and with it in, the row's own margin holds
    proc, doc, _ = run_gate(tmp_path, base, cur)
    rows = {b["name"]: b for b in doc["runs"][0]["benchmarks"]}
    quiet = rows["stream_triad/aten/float32/8M/cpu/fwd"]
    assert quiet["group_change"] > quiet["group_margin"] and quiet["relative_change"] < quiet["group_margin"], quiet
    assert quiet["verdict"] == "noisy" and proc.returncode == 0 and flagged(doc) == {}, proc.stdout


def test_rows_stalled_inside_their_repetitions_do_not_move_their_ops_median(tmp_path, monkeypatch):
    """Measured (docs/benchmarks.md, round m7): two of the fallback's four rows stalled in some repetitions (CV
    above 50%, p > 0.05), 2.2x and 4.8x slower by their medians; a steady row +36%. The op/impl's median is taken
    over rows with a CV up to 5 x --max-cv only, so the stalled rows do not carry the steady one. Its must-catch:
    a slowed kernel whose repetitions vary by about 17% (CV) is still flagged (4 or more of its 6 rows, nothing
    else; measured, the slowed rows' CVs were 2-19%)."""
    base, cur = make_report_run(1, row_noise=0.05), make_report_run(2, row_noise=0.05)
    medians = {}
    for e in base["benchmarks"]:
        if e["run_type"] == "iteration":
            medians.setdefault(e["name"], []).append(e["real_time"])
    shape = {"rms_norm/fallback/float32/1M/cpu/fwd": [0.4, 2.2, 2.4, 0.5, 3.5],
             "rms_norm/fallback/float32/1M/cpu/fwd_bwd": [0.6, 4.8, 5.0, 0.9, 7.0],
             "rms_norm/fallback/float32/8M/cpu/fwd": [0.98, 0.99, 0.97, 0.98, 0.99],
             "rms_norm/fallback/float32/8M/cpu/fwd_bwd": [1.36, 1.37, 1.35, 1.36, 1.37]}
    for e in cur["benchmarks"]:
        if e["name"] in shape and e["run_type"] == "iteration":
            e["real_time"] = e["cpu_time"] = sorted(medians[e["name"]])[2] * shape[e["name"]][e["repetition_index"]]
    proc, doc, _ = run_gate(tmp_path, base, cur)
    steady = next(b for b in doc["runs"][0]["benchmarks"] if b["name"] == "rms_norm/fallback/float32/8M/cpu/fwd_bwd")
    assert steady["relative_change"] > 0.2 and steady["verdict"] != "regression", steady
    assert proc.returncode == 0 and flagged(doc) == {}, proc.stdout
    # Without the CV bound the two stalled rows carry it.
    monkeypatch.setattr(bench_gate, "GROUP_CV_FACTOR", 1e9)
    proc, doc, _ = run_gate(tmp_path, base, cur)
    assert flagged(doc).get("rms_norm/fallback/float32/8M/cpu/fwd_bwd") == "regression", proc.stdout
    monkeypatch.undo()
    # The must-catch: the slowed kernel's rows, repetitions spread by +-30% (CV about 17%), are flagged.
    base = make_report_run(1, row_noise=0.05)
    cur = make_report_run(2, row_noise=0.05)
    medians = {}
    for e in base["benchmarks"]:
        if e["run_type"] == "iteration":
            medians.setdefault(e["name"], []).append(e["real_time"])
    for k, e in enumerate(cur["benchmarks"]):
        if e["name"].startswith(("rms_norm/fused.out/", "rms_norm/fused/")) and e["run_type"] == "iteration":
            wide = draws(k, 2 * sorted(medians[e["name"]])[2], 5, noise=0.3)
            e["real_time"] = e["cpu_time"] = wide[e["repetition_index"]]
    proc, doc, _ = run_gate(tmp_path, base, cur)
    rows = {b["name"]: b for b in doc["runs"][0]["benchmarks"]}
    assert max(rows[n]["cv"] for n in rows if n.startswith("rms_norm/fused")) > 0.1
    fused = {n for n in rows if n.startswith(("rms_norm/fused.out/", "rms_norm/fused/"))}
    assert proc.returncode == 1 and set(flagged(doc)) <= fused and len(flagged(doc)) >= 4, proc.stdout


def test_without_anchors_the_absolute_rule_decides(tmp_path):
    """A run without peers or triad (crossdev_bench's own cases) has no drift estimate: v1's rule, said so."""
    base = gbench_json({f"op/fused/float32/{k}/cpu/fwd": draws(k, 100.0, 5) for k in range(10)})
    cur = gbench_json({f"op/fused/float32/{k}/cpu/fwd": draws(k + 50, 130.0, 5) for k in range(10)})
    proc, doc, md = run_gate(tmp_path, base, cur)
    assert proc.returncode == 1 and doc["runs"][0]["drift"]["mode"] == "absolute"
    assert "0 anchor row(s)" in doc["runs"][0]["drift"]["note"] and "absolute times decide" in md
    assert all(b["relative_change"] is None and b["verdict"] == b["absolute_verdict"] for b in doc["runs"][0]["benchmarks"])


def test_bad_drift_options_exit_2(tmp_path):
    good = gbench_json({"a": [1.0]})
    for extra in (["--drift", "sideways"], ["--drift-z", "0"], ["--max-spread", "-1"]):
        proc, _, _ = run_gate(tmp_path, good, good, *extra)
        assert proc.returncode == 2 and extra[0] in proc.stderr, extra
