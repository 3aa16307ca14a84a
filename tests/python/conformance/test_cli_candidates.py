"""Candidate rows (issue 14): an ops-matrix row names any dispatcher op as the candidate, with
crossdev's op (or another) as the reference; `crossdev run --load-library` (repeatable) loads the
extension that registers it. The candidate gets the op's inputs, tolerances and gradient checks: a
right one passes (0), a wrong one fails with the mismatch in the bundle (1), a missing op or a
schema that does not fit the inputs is bad input naming file:line, the op and the mismatch (2).
The ops are the test-only libcrossdev_test_candidates (tests/candidates)."""
import json
import pathlib

import pytest

from conftest import REAL_ACCELERATOR

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests/fixtures/candidate_matrices"
BAD = sorted(FIXTURES.glob("bad_*.yaml"))


@pytest.fixture(scope="module")
def candidates_library(built_library):
    return built_library("crossdev_test_candidates")


def run_bundle(cli, tmp_path, *args, env=None):
    out = tmp_path / "bundle.json"
    proc = cli("run", "--quiet", "--out", out, *args, env=env)
    cases = json.loads(out.read_text())["cases"] if out.exists() else []
    return proc, cases


def test_right_candidates_pass_on_real_and_simulated_devices(cli, candidates_library, tmp_path):
    proc, cases = run_bundle(cli, tmp_path, "--matrix", FIXTURES / "good.yaml", "--load-library", candidates_library,
                             "--simulate", "mps")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = [c for c in cases if c["execution"] != "not_run"]
    assert ran and all(c["status"] == "pass" for c in ran), [c for c in ran if c["status"] != "pass"][:2]
    on_mps = [c for c in cases if "/mps/" in c["id"]]
    if REAL_ACCELERATOR:
        # sim is not registered beside a real accelerator: the mps cases are skipped and say why.
        assert on_mps and all(c["execution"] == "not_run" and c["status"] == "skip" and
                              f"this host has a real {REAL_ACCELERATOR}" in c["message"] for c in on_mps), on_mps[:1]
        assert {c["execution"] for c in ran} == {"real"}
    else:
        assert {c["execution"] for c in ran} == {"real", "simulated"}
    assert all(c["id"].endswith("/candidate") and c["details"]["impl"] == "candidate" for c in cases)
    modulate = [c for c in ran if c["id"].startswith("cand.modulate/")]
    # Every shape set of crossdev::modulate, backward included, against the reference op.
    assert {c["details"]["shape_set"] for c in modulate} >= {"basic", "empty", "size1", "odd_tail", "strided",
                                                              "broadcast", "large"}
    checked_device = "cpu" if REAL_ACCELERATOR else "mps"
    case = next(c for c in modulate if c["id"] == f"cand.modulate/{checked_device}/float32/odd_tail/candidate")
    assert case["details"]["candidate"] == "crossdev_test::modulate_good"
    assert case["details"]["reference"] == "crossdev::modulate"
    compared = {"golden out", "vs_reference out", "golden grad.x", "vs_reference grad.scale"}
    compared |= set() if checked_device == "cpu" else {"vs_cpu out"}  # a device other than the cpu is also held to it
    assert compared <= set(case["details"])
    extra = next(c for c in ran if c["id"].startswith("cand.modulate.extra_arg/"))
    assert extra["details"]["reference"] == "crossdev::modulate"  # the default reference


def test_a_wrong_candidate_fails_with_the_mismatch(cli, candidates_library, tmp_path):
    proc, cases = run_bundle(cli, tmp_path, "--matrix", FIXTURES / "wrong.yaml", "--load-library", candidates_library)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    status = {c["id"]: c for c in cases}
    wrong = [c for c in cases if c["id"].startswith("cand.wrong/")]
    right = [c for c in cases if c["id"].startswith("cand.right/")]
    assert len(wrong) == len(right) == 2
    assert all(c["status"] == "fail" for c in wrong) and all(c["status"] == "pass" for c in right)
    case = status["cand.wrong/cpu/float32/odd_tail/candidate"]
    assert "Mismatched elements" in case["message"] and "max_abs=" in case["message"], case["message"]
    assert case["details"]["first_mismatch"].startswith("golden out [")
    assert case["metrics"]["mismatches"] > 0 and case["metrics"]["max_abs"] > 0
    assert "cand.wrong/cpu/float32/odd_tail/candidate" in proc.stdout  # the console names the failing case


def test_a_candidate_without_autograd_fails_the_backward_check(cli, candidates_library, tmp_path):
    proc, cases = run_bundle(cli, tmp_path, "--matrix", FIXTURES / "no_autograd.yaml", "--load-library",
                             candidates_library)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    status = {c["id"]: c for c in cases}
    backward = status["cand.no_autograd/cpu/float32/basic/candidate"]
    assert backward["status"] == "error" and "no autograd kernel" in backward["message"], backward
    assert status["cand.no_autograd.forward/cpu/float32/basic/candidate"]["status"] == "pass"


def expected_error(path):
    line, _, text = path.read_text().splitlines()[0].removeprefix("# expect-error: ").partition(": ")
    return int(line), text


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_a_candidate_that_does_not_fit_is_bad_input_with_file_line(cli, candidates_library, path):
    line, text = expected_error(path)
    proc = cli("run", "--matrix", path, "--load-library", candidates_library)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"{path}:{line}: "), proc.stderr
    assert text in proc.stderr


def test_without_the_library_the_candidate_is_not_registered(cli):
    proc = cli("run", "--matrix", FIXTURES / "good.yaml")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{FIXTURES / 'good.yaml'}:9: " in proc.stderr
    assert "crossdev_test::modulate_good is not registered" in proc.stderr and "--load-library" in proc.stderr


def test_load_library_is_repeatable_and_takes_lists(cli, candidates_library, build_dir, tmp_path):
    mutants = build_dir / "lib" / "libcrossdev_mutants.so"
    matrix = FIXTURES / "wrong.yaml"
    filter_ = ["--filter", "cand.right"]
    for libraries in (["--load-library", mutants, "--load-library", candidates_library],
                      ["--load-library", f"{mutants}:{candidates_library}"],
                      ["--load-library", candidates_library, "--no-isolate"]):
        proc = cli("run", "--matrix", matrix, "--quiet", *filter_, *libraries)
        assert proc.returncode == 0, (libraries, proc.stdout + proc.stderr)
    missing = tmp_path / "libnothere.so"
    proc = cli("run", "--matrix", matrix, "--load-library", candidates_library, "--load-library", missing)
    assert proc.returncode == 2 and str(missing) in proc.stderr
