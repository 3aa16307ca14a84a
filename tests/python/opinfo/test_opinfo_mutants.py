"""Proof that the opinfo suite can fail, and fails only where it should (issue 24, docs/opinfo.md
"Proof that it can fail"): deliberately wrong ATen kernels for sim (tests/mutants/aten/, one
library per mutant) loaded into the worker with `--load-library`. Two engine runs over one matrix,
each shared by several tests (every run starts a worker per row, and each imports op_db):

  - the tanh mutant (off by 1/256) and the sinh mutant (one ULP up), no expectations;
  - the tanh_backward mutant (off by 1/256) alone, with the tanh mutant's xfail entry kept.

The float64 diagnostic of the failing samples (which side is closer to exact) is checked on the
first run; its other direction (the device closer) in-process, without op_db."""
import json
import textwrap

import pytest

from conftest import requires_sim

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator

# sin, sinc, sinh, tan, tanh, sqrt: tanh, and five ops that do not call it (sinh with its own mutant).
UNARY_OPS = "[ast][iaq][nr]*"
MATRIX = f"""\
suite: opinfo
cases:
  - {{id: m.unary, source: "issue 24", intent: "mutants", opinfo: "{UNARY_OPS}", devices: [mps], dtypes: [float32],
     checks: [forward, backward], max_samples: 2}}
  - {{id: m.profile_gap, source: "issue 24", intent: "an op the mps-like profile lacks", opinfo: "linalg.solve_ex",
     devices: [mps], dtypes: [float32], checks: [forward], max_samples: 1}}
  - {{id: m.loose, source: "issue 24", intent: "a row's own tolerance", opinfo: "tanh", devices: [mps], dtypes: [float32],
     checks: [backward], max_samples: 2, tolerance: {{rtol: 1e-2, atol: 1e-5}}}}
"""
LOOSE_TOLERANCE_LINE = 8  # the line of m.loose's `tolerance`
OTHER_OPS = ("sin", "sinc", "sinh", "tan", "sqrt")


def engine_run(cli, tmp_path, built_library, mutants, *extra, expectations=None):
    (tmp_path / "mutants.yaml").write_text(MATRIX)
    if expectations:
        (tmp_path / "expectations" / "opinfo").mkdir(parents=True)
        (tmp_path / "expectations" / "opinfo" / "mps.yaml").write_text(textwrap.dedent(expectations))
    libraries = [arg for m in mutants for arg in ("--load-library", built_library(f"crossdev_test_aten_mutant_{m}"))]
    bundle = tmp_path / "bundle.json"
    proc = cli("run", "--matrix", tmp_path / "mutants.yaml", "--simulate", "mps", "--out", bundle, *libraries, *extra)
    doc = json.loads(bundle.read_text()) if bundle.exists() else {"cases": [], "summary": {}}
    return proc, {c["id"]: c for c in doc["cases"]}, doc["summary"], bundle


def case_of(cases, op, check="forward", row="m.unary"):
    return cases[f"{row}/{op}/mps/float32/{check}"]


@pytest.fixture(scope="module")
def tanh_mutant_run(cli, tmp_path_factory, built_library):
    return engine_run(cli, tmp_path_factory.mktemp("tanh_mutant"), built_library,
                      ["tanh_off_by_1_in_256", "sinh_one_ulp"], "--filter", "m.[up]*")


@pytest.fixture(scope="module")
def tanh_backward_mutant_run(cli, tmp_path_factory, built_library):
    """The tanh mutant removed, its forward entry kept; tanh's backward expected to fail (m.loose:
    not with the row's own, looser tolerance)."""
    return engine_run(cli, tmp_path_factory.mktemp("tanh_backward_mutant"), built_library,
                      ["tanh_backward_off_by_1_in_256"], "--filter", "m.[ul]*", expectations="""\
        expectations:
          - {match: "m.unary/tanh/mps/float32/forward", status: xfail, reason: "the tanh mutant", class: numerics}
          - {match: "m.unary/tanh/mps/float32/backward", status: xfail, reason: "a tanh or tanh_backward mutant", class: numerics}
        """)


def test_tanh_off_by_one_part_in_256_fails_the_tanh_cases_and_no_case_of_another_op(tanh_mutant_run):
    proc, cases, _, _ = tanh_mutant_run
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for check in ("forward", "backward"):  # tanh's backward takes the (wrong) output
        tanh = case_of(cases, "tanh", check)
        assert tanh["status"] == "fail", tanh
        assert tanh["metrics"]["failing_samples"] == tanh["metrics"]["samples"] >= 1, tanh
    for op in OTHER_OPS:
        for check in ("forward", "backward"):
            assert case_of(cases, op, check)["status"] == "pass", case_of(cases, op, check)
    assert sorted({c["details"]["op"] for c in cases.values() if c["row_id"] == "m.unary"}) == \
        sorted(OTHER_OPS + ("tanh",)), "the glob selects tanh and the five others"


def test_a_one_ulp_perturbation_passes_the_tolerance_floor(tanh_mutant_run):
    _, cases, _, _ = tanh_mutant_run
    sinh = case_of(cases, "sinh")
    assert sinh["status"] == "pass", sinh
    assert sinh["metrics"]["max_abs"] > 0, "the sinh mutant ran: its result differs from the CPU's"
    assert 0 < sinh["metrics"]["max_ulp"] <= 1, sinh["metrics"]


def test_the_failing_samples_say_the_cpu_golden_is_closer_to_float64_than_the_mutant(tanh_mutant_run):
    _, cases, _, _ = tanh_mutant_run
    tanh = case_of(cases, "tanh")
    n = tanh["metrics"]["failing_samples"]
    assert tanh["details"]["float64"].startswith(f"closer to the float64 CPU result: CPU golden in {n} of {n} "), tanh
    assert tanh["metrics"]["float64_golden_distance"] < 1e-6 < 1e-3 < tanh["metrics"]["float64_device_distance"]
    for line in tanh["details"]["failing_samples"].splitlines():
        assert "; float64: device off by " in line and ": CPU golden closer; " in line, line
        assert " element(s) outside tolerance beyond 4x the golden's own distance, worst [0][" in line, line
    assert "float64" not in case_of(cases, "sin")["details"], "passing cases compute no float64 result"


def test_the_reports_failing_sample_view_shows_the_float64_diagnostic(tanh_mutant_run, tmp_path):
    from crossdev.report.render import main as render_main
    _, _, _, bundle = tanh_mutant_run
    assert render_main([str(bundle), "--out", str(tmp_path)]) == 0
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    section = page[page.find('<section id="opinfo">'):]
    assert "float64 diagnostic: closer to the float64 CPU result: CPU golden in " in section
    assert ": CPU golden closer" in section, "each failing sample's line"


def test_an_op_the_mps_like_profile_does_not_support_comes_out_unimplemented(tanh_mutant_run, cli):
    _, cases, _, bundle = tanh_mutant_run
    case = case_of(cases, "linalg.solve_ex", row="m.profile_gap")
    assert case["status"] == "error" and "is not currently implemented for the MPS device" in case["message"], case
    proc = cli("expectations", "accept", bundle, "--dry-run", env={"CI": ""})
    assert proc.returncode == 0, proc.stderr
    assert "+ m.profile_gap/linalg.solve_ex/mps/float32/forward (unimplemented)" in proc.stdout, proc.stdout
    assert "+ m.unary/tanh/mps/* (numerics)" in proc.stdout, proc.stdout


def test_a_wrong_tanh_backward_fails_only_the_backward_check(tanh_backward_mutant_run):
    _, cases, summary, _ = tanh_backward_mutant_run
    backward = case_of(cases, "tanh", "backward")
    assert backward["status"] == "xfail" and backward["metrics"]["failing_samples"] >= 1, backward
    assert case_of(cases, "tanh")["status"] == "xpass", "the forward passes (its entry is the tanh mutant's)"
    others = [c for c in cases.values() if c["details"]["op"] != "tanh" and c["row_id"] == "m.unary"]
    assert len(others) == 2 * len(OTHER_OPS) and all(c["status"] == "pass" for c in others), others
    assert summary["fail"] == 0 and summary["error"] == 0 and summary["crash"] == 0, summary


def test_removing_a_mutant_while_keeping_its_xfail_gates_as_an_unexpected_pass(tanh_backward_mutant_run):
    proc, cases, summary, _ = tanh_backward_mutant_run
    forward = case_of(cases, "tanh")
    assert forward["status"] == "xpass" and "remove the expectation" in forward["message"], forward
    assert summary["xpass"] == 1 and summary["gates"] is True, summary
    assert proc.returncode == 1, "the unexpected pass alone gates: nothing else failed"


def test_a_rows_tolerance_replaces_the_table_and_the_case_names_the_row_as_its_source(tanh_backward_mutant_run):
    _, cases, _, bundle = tanh_backward_mutant_run
    loose = case_of(cases, "tanh", "backward", row="m.loose")
    assert loose["status"] == "pass", "1/256 off is within rtol 1e-2"
    assert loose["metrics"]["max_rel"] > 1e-3, "the tanh_backward mutant ran on this row too"
    assert loose["details"]["tolerance"] == "rtol=0.01, atol=1e-05"
    assert loose["details"]["tolerance_source"] == \
        f"row {bundle.parent / 'mutants.yaml'}:{LOOSE_TOLERANCE_LINE} (replaces crossdev per-dtype table)", loose["details"]
    assert case_of(cases, "tanh", "backward")["details"]["tolerance_source"] == "crossdev per-dtype table"


@pytest.mark.parametrize("tolerance, words", [
    ("{rtol: 1e-3}", "expected exactly {rtol: <number>, atol: <number>}"),
    ("{rtol: -1, atol: 0}", "rtol and atol must be finite numbers >= 0"),
    ("{rtol: .nan, atol: 0}", "rtol and atol must be finite numbers >= 0"),
    ("{float32: {rtol: 1e-3, atol: x}}", "float32: rtol and atol must be finite numbers >= 0"),
    ("1e-3", "expected {rtol: <number>, atol: <number>} (every dtype of the row) or {<dtype>: {rtol"),
])
def test_a_bad_row_tolerance_is_exit_2_naming_file_line(cli, tmp_path, tolerance, words):
    matrix = tmp_path / "bad.yaml"
    matrix.write_text("suite: opinfo\ncases:\n"
                      '  - {id: b, source: "issue 24", intent: "test", opinfo: "sin", devices: [mps], dtypes: [float32],\n'
                      f"     tolerance: {tolerance}}}\n")
    proc = cli("run", "--matrix", matrix, "--simulate", "mps", "--out", tmp_path / "b.json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{matrix}:4:" in proc.stderr and words in proc.stderr, proc.stderr
    assert not (tmp_path / "b.json").exists(), "nothing ran"


def test_the_workers_check_names_an_unknown_dtype_or_one_the_row_does_not_run():
    """The dtype names of a per-dtype `tolerance` (BAD records: exit 2 at the key's file:line, as for
    `dtypes`, test_opinfo_suite.py); the engine checks the numbers (above) before any worker starts."""
    from crossdev.opinfo import row_tolerance
    exact = {"rtol": 0, "atol": 0}
    row = {"dtypes": ["float32"], "tolerance": {"float16": exact, "float32": exact, "float33": exact}}
    assert row_tolerance.problems(row, ("float32", "float16")) == [
        "dtype 'float16' is not one of the row's dtypes (float32)",
        "unknown dtype 'float33'; expected one of float32, float16"]


class _Sample:
    """The part of op_db's SampleInput that float64_diagnostic uses."""

    def __init__(self, input):
        self.input, self.args, self.kwargs = input, (), {}

    def transform(self, f):
        return _Sample(f(self.input))


def test_the_float64_diagnostic_names_the_device_when_the_cpu_golden_is_the_one_further_off():
    import torch
    from crossdev.opinfo import float64_diagnostic, samples

    x = torch.linspace(-3, 3, 64)
    exact = torch.tanh(x.double())
    kept = samples.Kept(actual=exact.float(), expected=exact.float() * (1 + 2 ** -12))
    d_device, d_golden = float64_diagnostic.distances(torch.tanh, _Sample(x), torch.float32, "forward", "function", kept)
    assert d_device < 1e-7 < 1e-5 < d_golden
    assert float64_diagnostic.closer(d_device, d_golden) == "device"
    assert float64_diagnostic.closer(d_golden, d_device) == "CPU golden"
    assert float64_diagnostic.unavailable(None, torch.float64, "forward") == "the golden is already in double precision"
