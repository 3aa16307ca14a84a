"""`crossdev expectations accept` never accepts a `harness` error (crossdev.harness_error): an exception in
crossdev's own code is crossdev's bug to fix, not a difference of the device. The device's own error beside
it is accepted as usual; the command names the harness error and exits 2 (issue 40: a real xla run gave two,
from moving a lazy tensor's storage)."""
import json

import pytest

from crossdev import expectations, harness_error


def case(op, status, message):
    return {"id": f"opinfo.x/{op}/xla/float32/forward", "row_id": "opinfo.x", "suite": "opinfo", "source": "test",
            "intent": "test", "file": "MATRIX", "line": 3, "status": status, "device": "xla:0",
            "execution": "real", "simulated": False, "message": message, "duration_s": 0.1, "metrics": {},
            "details": {}}


def bundle(tmp_path, cases):
    matrix = tmp_path / "opinfo_x.yaml"
    matrix.write_text("rows: []\n")
    for c in cases:
        c["file"] = str(matrix)
    doc = {"schema": "crossdev.bundle", "schema_version": 3, "created_utc": "2026-11-27T00:00:00Z", "run_id": "r",
           "tool": {"name": "crossdev", "version": "0.1.0"},
           "execution_target": {"device_kind": "xla", "device_model": "xla:0", "driver": "", "libtorch_version": "2.9.0",
                                "cuda_version": "", "compiler": "gcc", "git_commit": "", "host": "h",
                                "simulated": False, "simulate_spec": "",
                                "devices": [{"kind": "xla", "count": 1, "provenance": "real", "names": ["xla:0"]}]},
           "matrices": [str(matrix)], "cases": cases, "benchmarks": None,
           "device_log": {"format": "crossdev-device-log/1", "entries": 0, "categories": {}, "outcomes": {}, "last": []}}
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(autouse=True)
def not_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)


def test_a_harness_error_is_never_accepted(tmp_path, capsys):
    broken = case("embedding_bag", "error", harness_error.message(RuntimeError("Attempted to set the storage")))
    genuine = case("cumsum", "error", "sample 2 (shapes [()]): RuntimeError: Value out of range")
    assert harness_error.is_harness_error(broken) and not harness_error.is_harness_error(genuine)
    assert expectations.run(["accept", str(bundle(tmp_path, [broken, genuine]))]) == 2
    written = (tmp_path / "expectations" / "opinfo" / "xla.yaml").read_text()
    assert "opinfo.x/cumsum/xla/float32/forward" in written and "embedding_bag" not in written, written
    err = capsys.readouterr().err
    assert "not accepted, crossdev's own error" in err and "opinfo.x/embedding_bag/xla/float32/forward" in err, err


def test_without_harness_errors_accept_exits_0(tmp_path):
    genuine = case("cumsum", "error", "sample 2 (shapes [()]): RuntimeError: Value out of range")
    assert expectations.run(["accept", str(bundle(tmp_path, [genuine]))]) == 0
