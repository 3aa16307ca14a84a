"""Honesty: a result produced on a simulated device is labelled simulated in the bundle, JUnit,
HTML and console, and never counted as a real-device pass."""
import json
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import requires_sim

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator

ROOT = pathlib.Path(__file__).resolve().parents[3]
SIMULATE = "cuda:2,mps,xpu,xla:1"


@pytest.fixture(scope="module")
def simulated_run(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    proc = cli("run", "--matrix", ROOT / "matrices/ops.yaml", "--simulate", SIMULATE, "--filter", "ops.swiglu*",
               "--out", out / "bundle.json", "--junit", out / "junit.xml")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, proc


def test_accelerator_rows_ran_on_sim_and_say_so(simulated_run, cli):
    out, _ = simulated_run
    bundle = json.loads((out / "bundle.json").read_text())
    real_kinds = {d["kind"] for d in json.loads(cli("devices", "--json").stdout)["devices"] if d["provenance"] == "real"}
    by_kind = {}
    for case in bundle["cases"]:
        kind = case["id"].split("/")[1]
        by_kind.setdefault(kind, []).append(case)
    for kind in ("cuda", "mps", "xpu", "xla"):
        if kind in real_kinds:
            continue
        ran = [c for c in by_kind[kind] if c["execution"] != "not_run"]
        assert ran, f"no {kind} case ran on the sim backend"
        for case in ran:
            assert case["execution"] == "simulated" and case["simulated"] is True, case["id"]
            assert case["device"].startswith("sim:"), case
            assert "simulated" in dict(case["details"]).get("simulated_as", ""), case
    assert bundle["execution_target"]["simulated"] is True
    assert bundle["summary"]["simulated"] > 0
    # the real-device count covers only cases that ran on real kinds
    real_cases = [c for c in bundle["cases"] if c["execution"] == "real"]
    assert all(c["id"].split("/")[1] in real_kinds | {"cpu"} for c in real_cases)
    assert bundle["summary"]["real"] == len(real_cases)


def test_junit_and_console_label_simulated(simulated_run):
    out, proc = simulated_run
    cases = {c["id"]: c for c in json.loads((out / "bundle.json").read_text())["cases"]}
    for tc in ET.parse(out / "junit.xml").getroot().iter("testcase"):
        assert tc.get("classname").endswith("." + cases[tc.get("name")]["execution"])
    assert "simulated" in proc.stdout.splitlines()[-1]


def test_html_marks_simulated_and_never_counts_them_real(simulated_run, tmp_path):
    out, _ = simulated_run
    proc = subprocess.run([sys.executable, "-m", "crossdev", "report", str(out / "bundle.json"), "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "index.html").read_text()
    assert "SIMULATED" in html
    bundle = json.loads((out / "bundle.json").read_text())
    summary = (tmp_path / "summary.md").read_text()
    assert str(bundle["summary"]["simulated"]) in summary
