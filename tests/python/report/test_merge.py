"""`crossdev merge`: runners' bundles into one bundle set that `crossdev report`, `gate`, `bench-gate`
and `diff` read wherever they read a bundle, with the same verdicts as on the bundles themselves; bad
input is exit 2 naming the file, and nothing is written."""
import copy
import gzip
import json
import subprocess
import sys

import pytest

import crossdev.merge as merge_cli
from crossdev.report import sample
from crossdev.report.bundle import BundleError, load_bundle, load_bundles
from crossdev.report.merge import merge as report_merge
from crossdev.report.render import main as render_main

GPU_SAMPLE = "reports/samples/2026-11-23-h100.json.gz"


def crossdev(repo_root, *args):
    proc = subprocess.run([sys.executable, "-m", "crossdev", *map(str, args)], cwd=repo_root, capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def write(path, doc):
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def demo(tmp_path):
    return {name: write(tmp_path / name, doc) for name, doc in sample.demo_bundles().items()}


def merged(tmp_path, *paths, name="merged.json"):
    out = tmp_path / name
    assert merge_cli.main([*map(str, paths), "--out", str(out)]) == 0
    return out


def test_a_set_reads_as_its_bundles(tmp_path, demo):
    out = merged(tmp_path, *demo.values())
    doc = json.loads(out.read_text())
    assert doc["schema"] == "crossdev.bundle_set" and doc["schema_version"] == 1
    assert [e["source"] for e in doc["bundles"]] == [str(p) for p in demo.values()]
    assert [e["bundle"] for e in doc["bundles"]] == list(sample.demo_bundles().values())  # unchanged
    separate, together = report_merge(map(str, demo.values())), report_merge([str(out)])
    assert not separate.errors and not together.errors
    assert [r.label for r in together.runners] == [r.label for r in separate.runners]
    assert [c for _, c in together.cases()] == [c for _, c in separate.cases()]
    assert together.runners[0].path == f"{demo['cpu.json']} (in {out})" and together.runners[0].file == str(out)


def test_merging_a_merge_is_flat_and_keeps_the_sources(tmp_path, demo):
    first = merged(tmp_path, demo["cpu.json"], demo["cuda.json"], name="first.json")
    second = merged(tmp_path, first, demo["mps-sim.json"], name="second.json")
    entries = json.loads(second.read_text())["bundles"]
    assert [e["source"] for e in entries] == [str(demo[n]) for n in ("cpu.json", "cuda.json", "mps-sim.json")]
    assert all(e["bundle"]["schema"] == "crossdev.bundle" for e in entries)


def test_report_of_a_set_shows_every_runner(tmp_path, demo, capsys):
    out = merged(tmp_path, *demo.values())
    assert render_main([str(out), "--out", str(tmp_path / "report")]) == 0
    html = (tmp_path / "report" / "index.html").read_text()
    for label in ("cpu@linux-cpu", "cuda@gpu-box", "cpu@linux-cpu+sim"):
        assert label in html
    assert "3 bundle(s) merged, 0 unusable" in capsys.readouterr().out


def test_the_commands_accept_a_set(tmp_path, demo, repo_root):
    rc, out, err = crossdev(repo_root, "merge", *demo.values(), "--out", tmp_path / "m.json")
    assert rc == 0 and "3 bundle(s) from 3 file(s)" in out, out + err
    rc, out, err = crossdev(repo_root, "report", tmp_path / "m.json", "--out", tmp_path / "report")
    assert rc == 0 and (tmp_path / "report" / "junit.xml").exists(), out + err
    rc, out, err = crossdev(repo_root, "gate", tmp_path / "m.json")
    assert rc == 0 and "gate: 3 bundle(s)" in out and "gate: PASS" in out, out + err
    rc, out, err = crossdev(repo_root, "diff", tmp_path / "m.json", tmp_path / "m.json")
    assert rc == 0 and out.startswith("same: "), out + err
    rc, out, err = crossdev(repo_root, "merge", "--help")
    assert rc == 0 and "--out" in out


def test_the_gate_fails_on_a_failing_runner_inside_a_set(tmp_path, demo, repo_root):
    failing = sample.bundle("cpu", [sample.case("bad.0", "context", status="fail", message="boom")], host="bad")
    out = merged(tmp_path, demo["cpu.json"], write(tmp_path / "bad.json", failing))
    rc, stdout, _ = crossdev(repo_root, "gate", out)
    assert rc == 1 and "GATE cpu@bad: bad.0: fail" in stdout
    empty = merged(tmp_path, demo["cpu.json"], write(tmp_path / "empty.json", sample.bundle("cpu", [], host="e")),
                   name="with-empty.json")
    rc, stdout, stderr = crossdev(repo_root, "gate", empty)
    assert rc == 2 and "the bundle has no cases" in stderr and f"(in {empty})" in stderr


@pytest.mark.parametrize("bad", ["missing", "not-a-bundle", "truncated"])
def test_bad_input_is_exit_2_naming_the_file_and_writes_nothing(tmp_path, demo, repo_root, bad):
    path = tmp_path / f"{bad}.json"
    if bad == "not-a-bundle":
        path.write_text(json.dumps(sample.bench_json("cpu", {"a/fused/float32/1": 1.0})))
    elif bad == "truncated":
        path.write_text(demo["cuda.json"].read_text()[:500])
    out = tmp_path / "m.json"
    out.write_text("previous")
    rc, stdout, stderr = crossdev(repo_root, "merge", demo["cpu.json"], path, "--out", out)
    assert rc == 2, stdout + stderr
    expected = {"missing": "cannot read", "truncated": "truncated",
                "not-a-bundle": "not a crossdev bundle (expected a crossdev.bundle"}[bad]
    assert f"crossdev merge: error: {path}: " in stderr and expected in stderr
    assert str(demo["cpu.json"]) + ":" not in stderr  # the good input is not blamed
    assert f"{out} not written" in stderr and "Traceback" not in stderr
    assert out.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temp file left


def test_usage_errors_exit_2(tmp_path, demo):
    with pytest.raises(SystemExit) as e:
        merge_cli.main([str(demo["cpu.json"])])  # no --out
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        merge_cli.main(["--out", str(tmp_path / "m.json")])  # no bundle
    assert e.value.code == 2


def test_an_unwritable_output_is_exit_2(tmp_path, demo, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert merge_cli.main([str(demo["cpu.json"]), "--out", str(blocker / "m.json")]) == 2
    assert "crossdev merge: error: cannot write" in capsys.readouterr().err


def test_an_infinite_metric_survives_the_merge(tmp_path):
    """1e999 is valid in a bundle (it reads as an infinity); the set spells it the same way."""
    doc = sample.bundle("cpu", [sample.case("a", "context", metrics={"max_ulp": 1.0})])
    path = tmp_path / "inf.json"
    path.write_text(json.dumps(doc).replace('"max_ulp": 1.0', '"max_ulp": 1e999'))
    out = merged(tmp_path, path)
    assert "1e999" in out.read_text()
    [bundle] = load_bundles(out)
    assert bundle.cases[0]["metrics"]["max_ulp"] == float("inf")


def test_a_gzip_bundle_merges(tmp_path, repo_root):
    gpu = json.loads(gzip.decompress((repo_root / GPU_SAMPLE).read_bytes()))
    out = merged(tmp_path, repo_root / GPU_SAMPLE)
    [bundle] = load_bundles(out)
    assert bundle.doc == gpu and bundle.source == str(repo_root / GPU_SAMPLE)


def test_a_damaged_set_is_bad_input_naming_the_set_and_the_bundle(tmp_path, demo, capsys):
    out = merged(tmp_path, *demo.values())
    doc = json.loads(out.read_text())
    doc["bundles"][1]["bundle"]["cases"][0]["status"] = "PASSED"
    write(out, doc)
    assert render_main([str(out), "--out", str(tmp_path / "report")]) == 2
    err = capsys.readouterr().err
    assert f"{out}: set.bundles[1] (source '{demo['cuda.json']}'): bundle.cases[0]" in err
    assert "expected one of pass, fail" in err


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d.update(schema_version=2), "set.schema_version: unsupported version 2 (this reader knows 1)"),
    (lambda d: d.update(bundles=[]), "set.bundles: an empty list (expected at least one crossdev.bundle)"),
    (lambda d: d["bundles"][0].pop("source"), "set.bundles[0]: missing required field 'source'"),
    (lambda d: d["bundles"][0].update(bundle=[]), "set.bundles[0] (source "),
    (lambda d: d["bundles"][0]["bundle"].update(schema="crossdev.bundle_set"), "bundle.schema: expected one of "
     "crossdev.bundle"),
])
def test_each_problem_in_a_set_is_named(tmp_path, demo, mutate, expected):
    out = merged(tmp_path, demo["cpu.json"])
    doc = json.loads(out.read_text())
    mutate(doc)
    write(out, doc)
    with pytest.raises(BundleError) as e:
        load_bundles(out)
    assert any(expected in p for p in e.value.problems), e.value.problems


def test_a_single_bundle_reader_refuses_a_set(tmp_path, demo):
    out = merged(tmp_path, *demo.values())
    with pytest.raises(BundleError, match="a crossdev.bundle_set of 3 bundle"):
        load_bundle(out)


def test_diff_pairs_the_runners_of_two_sets(tmp_path, demo, repo_root):
    before = merged(tmp_path, *demo.values(), name="before.json")
    cuda = copy.deepcopy(sample.demo_bundles()["cuda.json"])
    cuda["cases"][0]["metrics"]["max_ulp"] = 9.0
    after = merged(tmp_path, demo["cpu.json"], write(tmp_path / "cuda2.json", cuda), name="after.json")
    rc, out, err = crossdev(repo_root, "diff", before, after)
    assert rc == 1, out + err
    assert f"changed: cuda@gpu-box: {cuda['cases'][0]['id']}" in out
    assert "only in before: runner cpu@linux-cpu+sim" in out


def test_bench_gate_reads_the_runners_with_benchmarks_in_a_set(tmp_path, demo, repo_root):
    out = merged(tmp_path, *demo.values())
    rc, stdout, stderr = crossdev(repo_root, "bench-gate", "--baseline", demo["cuda.json"], out)
    assert rc == 0, stdout + stderr
    assert f"current `{demo['cuda.json']} (in {out})`".replace("_", "\\_") in stdout  # only the cuda runner
    rc, stdout, stderr = crossdev(repo_root, "gate", out, "--baseline-bench", demo["cuda.json"])
    assert rc == 0 and "gate: PASS" in stdout, stdout + stderr
    no_bench = merged(tmp_path, demo["cpu.json"], name="no-bench.json")
    rc, _, stderr = crossdev(repo_root, "bench-gate", "--baseline", demo["cuda.json"], no_bench)
    assert rc == 2 and f"{no_bench}: no bundle of the set embeds benchmark results" in stderr


def test_the_tools_import_neither_torch_nor_the_compiled_core(repo_root):
    code = ("import sys, crossdev.merge, crossdev.gate, crossdev.bench_gate, crossdev.diff, crossdev.report.render, "
            "crossdev.report.validate, crossdev.report.ctest_measurements; "
            "loaded = [m for m in sys.modules if m == 'torch' or m.startswith('torch.') or m == 'crossdev._crossdev']; "
            "print(loaded); sys.exit(1 if loaded else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo_root, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
