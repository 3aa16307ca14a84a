"""End to end on bundles the crossdev binary writes: validate, render, gate.

Counts and ids are read from the bundles themselves, so these tests follow the matrices as they grow.
"""
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from crossdev.report.bundle import load_bundle
from crossdev.report.render import main as render_main

from conftest import requires_sim

REDIRECT_TABLE = "matrices/redirect_table.yaml"
FAILING = "tests/fixtures/failing_matrices"


@pytest.fixture(scope="module")
def bundles(cli, repo_root, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("real")
    runs = {"cpu": [], "sim": ["--simulate", "cuda:2,mps,xpu,xla:1"], "failing": []}
    paths = {}
    for name, extra in runs.items():
        matrix = FAILING if name == "failing" else REDIRECT_TABLE
        paths[name] = tmp / f"{name}.json"
        proc = cli("run", "--matrix", repo_root / matrix, "--out", paths[name], "--quiet", *extra)
        assert proc.returncode == (1 if name == "failing" else 0), proc.stdout + proc.stderr
    return paths


def gate(repo_root, *paths):
    return subprocess.run([sys.executable, "-m", "crossdev", "gate", *map(str, paths)], cwd=repo_root,
                          capture_output=True, text=True, timeout=60)


def test_writer_output_passes_the_validator(bundles):
    for path in bundles.values():
        bundle = load_bundle(path)
        assert bundle.cases, path


def test_redirect_table_has_every_matrix_cell(bundles, tmp_path):
    assert render_main([str(bundles["cpu"]), str(bundles["sim"]), "--out", str(tmp_path)]) == 0
    html = (tmp_path / "index.html").read_text()
    table = re.search(r'id="redirect-table">(.*?)</table>', html).group(1)
    cases = [c for c in load_bundle(bundles["cpu"]).cases if c["id"].startswith("table.")]
    hosts = {c["id"].split(".")[2] for c in cases}
    assert len(re.findall(r"<th>", table)) == 1 + len(hosts)  # "Device Specification" + one per host profile
    entries = len(re.findall(r"override (?:on|off): </small>", table))
    assert entries == len(cases)
    assert "FAIL" not in table
    assert table.count("→ cpu") > 0 and table.count("→ cuda:0") > 0


def test_failing_bundle_shows_its_failures_and_gates(bundles, tmp_path, repo_root):
    failing = [c for c in load_bundle(bundles["failing"]).cases if c["status"] in ("fail", "xpass", "error", "crash")]
    assert failing
    assert render_main([str(bundles["cpu"]), str(bundles["failing"]), "--out", str(tmp_path)]) == 0
    html = (tmp_path / "index.html").read_text()
    failures = re.search(r'id="failures">(.*?)</section>', html).group(1)
    for case in failing:
        assert f"<code>{case['id']}</code>" in failures
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert sum(int(s.get("failures")) + int(s.get("errors")) for s in junit.iter("testsuite")) == len(failing)

    proc = gate(repo_root, bundles["cpu"], bundles["failing"])
    assert proc.returncode == 1, proc.stdout
    assert len(re.findall(r"^GATE ", proc.stdout, re.M)) == len(failing)
    assert gate(repo_root, bundles["cpu"], bundles["sim"]).returncode == 0


@requires_sim  # beside a real accelerator `run --simulate` does not simulate: nothing to label
def test_simulated_run_is_labelled(bundles, tmp_path):
    doc = json.loads(bundles["sim"].read_text())
    assert doc["execution_target"]["simulated"] is True
    assert render_main([str(bundles["sim"]), "--out", str(tmp_path)]) == 0
    md = (tmp_path / "summary.md").read_text()
    real = sum(c["status"] == "pass" and c["execution"] == "real" for c in doc["cases"])
    assert f"{real} passed on real devices" in md and "SIMULATED kinds: cuda:2,mps,xpu,xla:1" in md
