"""Crash isolation: a row that kills its process (like a segfaulting kernel) or hangs is reported
as `crash` and the run goes on with the next rows; the bundle keeps everything else."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
CONTEXT = ROOT / "matrices/context.yaml"


def run(cli, tmp_path, env, *extra):
    out = tmp_path / "b.json"
    proc = cli("run", "--matrix", CONTEXT, "--out", out, "--quiet", *extra, env=env)
    return proc, json.loads(out.read_text())


def hooks(build_dir):
    """The test-only crash/hang hooks (tests/test_hooks): the production runner reads no
    CROSSDEV_TEST_* variable, so the hooks act only in a run that loads this library."""
    return ("--load-library", build_dir / "lib" / "libcrossdev_test_hooks.so")


def test_segfaulting_row_is_a_crash_and_the_run_goes_on(cli, tmp_path, build_dir):
    proc, bundle = run(cli, tmp_path, {"CROSSDEV_TEST_CRASH_ROW": "ctx.inference.mps"}, *hooks(build_dir))
    assert proc.returncode == 1
    cases = {c["id"]: c for c in bundle["cases"]}
    crash = cases["ctx.inference.mps"]
    assert crash["status"] == "crash" and "signal 11" in crash["message"]
    assert crash["execution"] == "not_run"
    # every other row of the file still ran, before and after the crash
    expected_ids = [line.split("id: ")[1].split(",")[0] for line in CONTEXT.read_text().splitlines() if "{id: " in line]
    assert set(cases) == set(expected_ids)
    assert all(c["status"] == "pass" for i, c in cases.items() if i != "ctx.inference.mps")
    assert bundle["summary"]["crash"] == 1


def test_hanging_row_times_out_as_crash(cli, tmp_path, build_dir):
    proc, bundle = run(cli, tmp_path, {"CROSSDEV_TEST_HANG_ROW": "ctx.autocast.cpu"}, "--row-timeout", "2", *hooks(build_dir))
    assert proc.returncode == 1
    cases = {c["id"]: c for c in bundle["cases"]}
    assert cases["ctx.autocast.cpu"]["status"] == "crash"
    assert "timed out" in cases["ctx.autocast.cpu"]["message"]
    assert cases["ctx.distributed.tpu"]["status"] == "pass"


def test_the_production_runner_ignores_the_test_variables(cli, tmp_path):
    """Without the hooks library the crash variable is inert: every row passes."""
    proc, bundle = run(cli, tmp_path, {"CROSSDEV_TEST_CRASH_ROW": "ctx.inference.mps"})
    assert proc.returncode == 0, proc.stderr
    assert bundle["summary"]["crash"] == 0
    assert {c["id"]: c["status"] for c in bundle["cases"]}["ctx.inference.mps"] == "pass"


def test_in_process_mode_gives_the_same_results(cli, tmp_path):
    _, isolated = run(cli, tmp_path, {})
    _, inline = run(cli, tmp_path, {}, "--no-isolate")
    strip = lambda b: sorted((c["id"], c["status"], c["message"]) for c in b["cases"])  # noqa: E731
    assert strip(isolated) == strip(inline)
