"""The cross-machine axis (docs/opinfo.md, "Cross-machine"): runner A exports its samples and outputs,
runner B replays A's samples, and `crossdev report A B` compares the two runners' outputs case by case.
Two machines stand in here as two runs under ATEN_CPU_CAPABILITY=default and avx512 (softmax's backward
differs bitwise between them, torch 2.13), so the pair finds real differences. Cheap: one op, two samples,
two engine runs shared by the module, --no-isolate; the report's side in-process (stdlib only)."""
import base64
import json
import os
import shutil
import struct
import subprocess

import pytest

from crossdev.report.machine_outputs import sha256_of

MATRIX = """\
suite: opinfo
cases:
  - {id: t.xm, source: "issue 24", intent: "test", opinfo: softmax, devices: [cpu], cross_machine: true,
     dtypes: [float32], checks: [forward, backward], max_samples: 2}
"""


def _second_capability():
    from crossdev.opinfo.cpu_capability import unavailable_reason
    return next((c for c in ("avx512", "avx2") if unavailable_reason(c) is None), "default")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(folder, capability of B): a.json + xa/ under default, b.json + xb/ replaying xa under avx512."""
    tmp = tmp_path_factory.mktemp("xm")
    (tmp / "m.yaml").write_text(MATRIX)
    second = _second_capability()
    for name, capability, extra in (("a", "default", []), ("b", second, ["--replay-samples", tmp / "xa"])):
        proc = _cli()("run", "--no-isolate", "--matrix", tmp / "m.yaml", "--export-samples", tmp / f"x{name}", *extra,
                   "--out", tmp / f"{name}.json", env={"ATEN_CPU_CAPABILITY": capability})
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return tmp, second


def _cli():
    """conftest's `cli`, for the module's fixture (conftest's is per test)."""
    from conftest import BUILD_DIR, INSTALLED, ROOT, crossdev_command

    def run(*args, env=None):
        full_env = dict(os.environ)
        if not INSTALLED:
            full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"),
                                                                   full_env.get("PYTHONPATH")]))
        full_env.update(env or {})
        return subprocess.run([*crossdev_command(), *map(str, args)], capture_output=True, text=True, env=full_env,
                              cwd=ROOT, timeout=300)
    return run


def _cases(path):
    return {c["id"]: c for c in json.loads(path.read_text())["cases"]}


def _merge(*paths):
    from crossdev.report.merge import merge
    return merge([str(p) for p in paths])


def test_both_runners_record_outputs_of_the_same_samples(runs):
    tmp, _ = runs
    a, b = _cases(tmp / "a.json"), _cases(tmp / "b.json")
    assert sorted(a) == sorted(b) == ["t.xm/softmax/cpu/float32/backward", "t.xm/softmax/cpu/float32/forward"]
    for case_id, case in a.items():
        d, e = case["details"], b[case_id]["details"]
        assert case["status"] == "pass" and case["execution"] == "real" and d["axis"] == "cross_machine", case
        assert d["samples_sha256"] == e["samples_sha256"] == sha256_of(tmp / "xa" / "t.xm.samples.pt")
        assert d["samples_from"] == "generated on this runner" and e["samples_from"].startswith("replayed from ")
        assert case["metrics"]["samples"] == 2 and d["outputs"].startswith("xa/t.xm/"), case
    assert (tmp / "xa" / "t.xm.samples.pt").read_bytes() == (tmp / "xb" / "t.xm.samples.pt").read_bytes()


def test_the_report_compares_the_pair_case_by_case_and_finds_real_differences(runs, tmp_path):
    tmp, second = runs
    report = _merge(tmp / "a.json", tmp / "b.json")
    assert not report.errors, report.errors
    (pair,) = report.cross_machine.pairs
    assert pair.execution == "real" and pair.row == "t.xm" and not pair.refused
    by_check = {c.check: c for c in pair.cases}
    assert sorted(by_check) == ["backward", "forward"] and all(c.status == "pass" for c in pair.cases), pair.cases
    assert all(c.samples == 2 and c.tolerance == "rtol=1.3e-06, atol=1e-05" for c in pair.cases)
    if second != "default":  # softmax's backward under avx512/avx2 is not the default kernels' bit for bit
        assert by_check["backward"].bitwise_equal < 2 and by_check["backward"].max_abs > 0, by_check["backward"]
    from crossdev.report.views.page import render_page
    page = render_page(report)
    assert 'id="cross-machine"' in page and "pair 1" in page and "bitwise equal" in page


def _perturbed(tmp, dest, keep_digest=False):
    """A copy of runner B (bundle + folder) whose forward outputs are 1% off; the bundle records the new
    digest unless keep_digest (then the file no longer matches its bundle: corrupt)."""
    shutil.copytree(tmp / "xb", dest / "xb")
    bundle = json.loads((tmp / "b.json").read_text())
    case = next(c for c in bundle["cases"] if c["id"].endswith("/forward"))
    path = dest / case["details"]["outputs"]
    doc = json.loads(path.read_text())
    entry = doc["samples"][1]["values"][0]
    raw = base64.b64decode(entry["data"])
    values = [v * 1.01 for v in struct.unpack(f"<{len(raw) // 4}f", raw)]
    entry["data"] = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    path.write_text(json.dumps(doc))
    if not keep_digest:
        case["details"]["outputs_sha256"] = sha256_of(path)
    (dest / "b.json").write_text(json.dumps(bundle))
    return dest / "b.json"


def test_outputs_beyond_the_tolerance_make_the_pair_red_and_the_gate_fail(runs, tmp_path, capsys):
    tmp, _ = runs
    report = _merge(tmp / "a.json", _perturbed(tmp, tmp_path))
    assert not report.errors, report.errors
    (pair,) = report.cross_machine.pairs
    status = {c.check: c.status for c in pair.cases}
    assert status == {"forward": "fail", "backward": "pass"}, pair.cases
    failing = next(c for c in pair.cases if c.check == "forward").failing
    assert failing[0].startswith("sample 1 ") and "beyond rtol=1.3e-06, atol=1e-05" in failing[0], failing
    from crossdev import gate
    assert gate.run([str(tmp / "a.json"), str(tmp_path / "b.json")]) == 1
    assert "across machines (real)" in capsys.readouterr().out


def test_an_altered_outputs_file_is_bad_input_naming_it(runs, tmp_path):
    tmp, _ = runs
    from crossdev.report import render
    altered = _perturbed(tmp, tmp_path, keep_digest=True)
    assert render.run([str(tmp / "a.json"), str(altered), "--out", str(tmp_path / "r")]) == 2
    (error,) = _merge(tmp / "a.json", tmp_path / "b.json").errors
    assert "softmax_float32_forward.json: sha256" in error.message and "as its bundle records" in error.message


def test_bundles_of_different_samples_are_refused(runs, tmp_path):
    tmp, _ = runs
    bundle = json.loads((tmp / "b.json").read_text())
    for case in bundle["cases"]:
        case["details"]["samples_sha256"] = "0" * 64
    (tmp_path / "b.json").write_text(json.dumps(bundle))
    report = _merge(tmp / "a.json", tmp_path / "b.json")
    (pair,) = report.cross_machine.pairs
    assert pair.refused and not pair.cases
    (error,) = report.errors
    assert "did not run the same samples" in error.message and "--replay-samples" in error.message, error.message


def test_a_corrupt_samples_file_to_replay_is_exit_2_naming_it(runs, tmp_path):
    tmp, _ = runs
    shutil.copytree(tmp / "xa", tmp_path / "xa")
    with open(tmp_path / "xa" / "t.xm.samples.pt", "ab") as f:
        f.write(b"x")
    proc = _cli()("run", "--no-isolate", "--matrix", tmp / "m.yaml", "--replay-samples", tmp_path / "xa",
                  "--export-samples", tmp_path / "xc", "--out", tmp_path / "c.json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{tmp / 'm.yaml'}:3:" in proc.stderr and "t.xm.samples.pt: sha256" in proc.stderr, proc.stderr
    assert "expected the bytes the other runner exported" in proc.stderr, proc.stderr


def test_replay_problems_are_found_without_running_anything(tmp_path, monkeypatch):
    from crossdev.opinfo import cross_machine
    row = {"id": "t.xm", "devices": ["cpu"], "cross_machine": True}
    monkeypatch.setenv(cross_machine.REPLAY_ENV, str(tmp_path))
    assert "t.xm.samples.pt: missing" in cross_machine.replay_problem(row)
    (tmp_path / "t.xm.samples.pt").write_bytes(b"samples")
    assert ".sha256: missing" in cross_machine.replay_problem(row)
    assert cross_machine.row_problems({**row, "devices": ["cuda"]})[0][0] == "devices"


def test_a_merged_bundle_set_compares_the_same_pair(runs, tmp_path):
    tmp, _ = runs
    from crossdev import merge as merge_command
    assert merge_command.run([str(tmp / "a.json"), str(tmp / "b.json"), "--out", str(tmp_path / "set.json")]) == 0
    direct, merged = _merge(tmp / "a.json", tmp / "b.json"), _merge(tmp_path / "set.json")
    assert not merged.errors, merged.errors
    assert [(c.case_id, c.status, c.bitwise_equal, c.max_abs) for p in merged.cross_machine.pairs for c in p.cases] == \
        [(c.case_id, c.status, c.bitwise_equal, c.max_abs) for p in direct.cross_machine.pairs for c in p.cases] != []


def test_a_malformed_outputs_file_is_bad_input_not_a_traceback(runs, tmp_path):
    tmp, _ = runs
    bundle_path = _perturbed(tmp, tmp_path)
    bundle = json.loads(bundle_path.read_text())
    case = next(c for c in bundle["cases"] if c["id"].endswith("/forward"))
    path = tmp_path / case["details"]["outputs"]
    doc = json.loads(path.read_text())
    del doc["samples"][0]["index"]
    path.write_text(json.dumps(doc))
    case["details"]["outputs_sha256"] = sha256_of(path)
    bundle_path.write_text(json.dumps(bundle))
    (error,) = _merge(tmp / "a.json", bundle_path).errors
    assert "not a well-formed crossdev.cross_machine_outputs" in error.message, error.message


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_the_report_measures_as_crossdevs_comparator(dtype):
    """machine_outputs (stdlib, in the report) measures as crossdev.parity.compare does (docs/parity.md):
    the same verdict, max abs, max rel and floored ULP on tensors with near-zero, equal and far values."""
    import torch

    from crossdev import parity
    from crossdev.opinfo.cross_machine import _encode
    from crossdev.report.machine_outputs import compare_sample

    g = torch.Generator().manual_seed(0)
    e = (torch.randn(64, generator=g, dtype=torch.float64) * torch.logspace(-8, 3, 64, dtype=torch.float64))
    e = e.to(getattr(torch, dtype))
    for scale, rtol, atol in ((1 + 1e-6, 1.3e-6, 1e-5), (1 + 2e-2, 1.6e-2, 1e-5), (1.5, 1e-3, 1e-5)):
        a = (e.double() * scale).to(e.dtype)
        a[0] = e[0]
        want = parity.compare(a, e, rtol=rtol, atol=atol, equal_nan=True)
        got = compare_sample({"values": _encode(e)}, {"values": _encode(a)}, rtol, atol)
        assert (got.mismatch is None) == bool(want["passed"]), (scale, got, want)
        for key in ("max_abs", "max_rel", "max_ulp"):
            assert getattr(got, key) == pytest.approx(float(want[key]), rel=1e-9), (key, scale, got, want)
