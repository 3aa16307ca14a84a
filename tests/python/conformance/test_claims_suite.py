"""`suite: claims` (matrices/claims.yaml, docs/xla.md): seed 001's claims observed on a device, run by
the engine's Python worker. On this CPU host the cpu rows run for real; a kind the host lacks, or only
simulates, is not_run with the reason (a claim about a device's runtime is not observed on sim, whose
runtime is the CPU's). The proof that a row can fail: the same claim expecting what the device does
not do. The recovery path (the version-counter error classified, use_no_grad applied) is driven here
by an F.linear that raises the error under inference_mode, as torch_xla does for a view."""
import json
import textwrap

import pytest

from crossdev.claims import seed001
from crossdev.claims.table import BY_NAME, CLAIMS


def run(cli, tmp_path, matrix, *extra):
    bundle = tmp_path / "b.json"
    proc = cli("run", "--matrix", matrix, "--out", bundle, *extra)
    cases = json.loads(bundle.read_text())["cases"] if bundle.exists() else []
    return proc, {c["id"]: c for c in cases}


def write(tmp_path, rows):
    path = tmp_path / "claims_t.yaml"
    path.write_text("suite: claims\ncases:\n" + textwrap.indent(textwrap.dedent(rows), "  "))
    return path


def test_the_catalog_rows_pass_on_the_cpu_and_say_why_xla_is_not_observed(cli, tmp_path, repo_root):
    proc, cases = run(cli, tmp_path, repo_root / "matrices" / "claims.yaml", "--simulate", "xla")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cpu = {k: c for k, c in cases.items() if k.endswith("/cpu")}
    assert len(cpu) >= 7 and all(c["status"] == "pass" and c["execution"] == "real" for c in cpu.values()), cpu
    assert cases["claims.inference_mode_view.eager/cpu"]["details"]["actual"] == "works"
    assert cases["claims.device_string_tpu/cpu"]["details"]["actual"] == "rejected"
    xla = cases["claims.inference_mode_view.xla/xla"]
    assert xla["status"] == "skip" and xla["execution"] == "not_run"
    assert "observed only on a real xla (sim runs the CPU's runtime)" in xla["message"], xla
    cuda = cases["claims.device_string_kind/cuda"]
    assert cuda["status"] == "skip" and "device not present" in cuda["message"]


def test_a_claim_the_device_does_not_bear_out_fails_the_run(cli, tmp_path):
    matrix = write(tmp_path, """\
        - {id: t.view, source: s, intent: i, claim: inference_mode_view, devices: [cpu], expect: raises_version_counter}
        """)
    proc, cases = run(cli, tmp_path, matrix)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    case = cases["t.view/cpu"]
    assert case["status"] == "fail" and case["details"]["actual"] == "works"
    assert case["message"] == "inference_mode_view on cpu: expected 'raises_version_counter', observed 'works'"


@pytest.mark.parametrize("row, where, words", [
    ("{id: t.a, source: s, intent: i, claim: inference_mode_viw, devices: [cpu], expect: works}", "claim",
     "unknown claim 'inference_mode_viw'; expected one of inference_mode_view, "),
    ("{id: t.b, source: s, intent: i, claim: autocast_kind, devices: [cpu], expect: float16}", "expect",
     "claim 'autocast_kind' observes one of bfloat16, float32, rejected; got 'float16'"),
    ("{id: t.c, source: s, intent: i, claim: autocast_kind, devices: [tpuu], expect: bfloat16}", "devices",
     "unknown device kind 'tpuu'"),
])
def test_a_bad_row_is_exit_2_naming_its_file_line_and_what_was_expected(cli, tmp_path, row, where, words):
    matrix = write(tmp_path, "- " + row + "\n")
    proc, _ = run(cli, tmp_path, matrix)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"claims_t.yaml:3" in proc.stderr and words in proc.stderr, proc.stderr


def test_every_claim_answers_one_of_its_outcomes_on_the_cpu():
    import torch
    for claim in CLAIMS:
        outcome, details = claim.observe(torch.device("cpu"))
        assert outcome in claim.outcomes, (claim.name, outcome, details)
        assert all(isinstance(v, str) for v in details.values())


class _VersionCounterLinear:
    """F.linear as torch_xla 2.9 behaves: a view of a tensor made outside inference_mode, inside it, raises."""

    def __init__(self, torch, keep_raising=False):
        self.original, self.torch, self.keep_raising = torch.nn.functional.linear, torch, keep_raising

    def __call__(self, x, w, b=None):
        if self.torch.is_inference_mode_enabled() or self.keep_raising:
            raise RuntimeError("Cannot set version_counter for inference tensor")
        return self.original(x, w, b)


def test_the_version_counter_error_is_classified_and_recovered_under_no_grad(monkeypatch):
    import torch
    monkeypatch.setattr(torch.nn.functional, "linear", _VersionCounterLinear(torch))
    assert BY_NAME["inference_mode_view"].observe(torch.device("cpu"))[0] == seed001.VERSION_COUNTER
    assert BY_NAME["no_grad_view"].observe(torch.device("cpu"))[0] == seed001.WORKS
    outcome, details = seed001.inference_mode_recovered(torch.device("cpu"))
    assert outcome == "recovered", details
    assert details["category"] == seed001.VERSION_COUNTER_CATEGORY and "use_no_grad" in details["recovery"]
    assert details["applied"].startswith("use_no_grad")


def test_a_recovery_that_does_not_help_is_not_called_recovered(monkeypatch):
    import torch
    monkeypatch.setattr(torch.nn.functional, "linear", _VersionCounterLinear(torch, keep_raising=True))
    outcome, details = seed001.inference_mode_recovered(torch.device("cpu"))
    assert outcome == "not_recovered" and "version_counter" in details["recovery_error"], details
