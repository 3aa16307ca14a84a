"""`crossdev report` (crossdev.report.render): merge, exit codes, escaping, simulated labelling and the
special views."""
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from crossdev.report import sample
from crossdev.report.render import main as render_main

XSS = '<script>alert("x")</script>'


def write(path, doc):
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def render(tmp_path, *bundles, extra=()):
    out = tmp_path / "out"
    rc = render_main([*map(str, bundles), "--out", str(out), *extra])
    return rc, {name: (out / name).read_text(encoding="utf-8") for name in ("index.html", "summary.md", "junit.xml")}


@pytest.fixture
def demo(tmp_path):
    return {name: write(tmp_path / name, doc) for name, doc in sample.demo_bundles().items()}


def test_three_bundles_one_corrupt_still_merges_the_others(tmp_path, demo, capsys):
    text = demo["cuda.json"].read_text()
    truncated = tmp_path / "truncated.json"
    truncated.write_text(text[: len(text) // 2])
    rc, out = render(tmp_path, demo["cpu.json"], truncated, demo["mps-sim.json"])
    assert rc == 2
    err = capsys.readouterr().err
    assert f"{truncated}:" in err and "truncated" in err
    assert str(demo["cpu.json"]) not in err
    html = out["index.html"]
    assert "cpu@linux-cpu" in html and "cpu@linux-cpu+sim" in html  # both good runners merged
    assert "cuda@gpu-box" not in html
    assert str(truncated) in html and 'id="input-errors"' in html
    unescaped_md = out["summary.md"].replace("\\", "")  # Markdown escapes _ in the path as \_
    assert str(truncated) in unescaped_md and "Unusable bundles" in unescaped_md
    inputs = ET.fromstring(out["junit.xml"]).find("testsuite[@name='crossdev.inputs']")
    assert inputs is not None and inputs.get("errors") == "1"
    assert inputs.find("testcase").get("name") == str(truncated)


def test_all_good_inputs_exit_0_and_no_temp_files_are_left(tmp_path, demo):
    rc, _ = render(tmp_path, *demo.values())
    assert rc == 0
    rc, _ = render(tmp_path, *demo.values())  # rewriting over an earlier report
    assert rc == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["index.html", "junit.xml", "summary.md"]


def test_missing_file_and_non_bundle_json_are_named(tmp_path, demo, capsys):
    not_bundle = write(tmp_path / "other.json", {"hello": 1})
    rc, out = render(tmp_path, demo["cpu.json"], tmp_path / "nope.json", not_bundle)
    assert rc == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nope.json'}: cannot read" in err
    assert f"{not_bundle}: bundle: missing required field 'schema': not a crossdev bundle (expected a " \
           "crossdev.bundle (written by `crossdev run`) or a crossdev.bundle_set" in err
    assert out["index.html"].count("cpu@linux-cpu") >= 1


@pytest.mark.parametrize("content, expected", [
    (json.dumps(sample.bench_json("cpu", {"a/fused/float32/1": 1.0})), "bundle: missing required field 'schema': not a "
     "crossdev bundle (expected a crossdev.bundle (written by `crossdev run`) or a crossdev.bundle_set (written "
     "by `crossdev merge`))"),
    (json.dumps({"schema": "crossdev.bench_gate", "verdict": "pass"}), "bundle.schema: expected one of "
     "crossdev.bundle, crossdev.bundle_set, got 'crossdev.bench_gate': not a crossdev bundle"),
    ("[1, 2, 3]", "bundle: expected a JSON object, got list: not a crossdev bundle (expected a crossdev.bundle"),
    ("<html>not json</html>", "1:1: not valid JSON"),
], ids=["benchmark-json", "other-schema", "array", "not-json"])
def test_the_command_on_a_file_that_is_not_a_bundle_exits_2_naming_it(tmp_path, repo_root, content, expected):
    """`crossdev report` on a file that is not a bundle: exit 2, naming the file and what was expected."""
    other = tmp_path / "other.json"
    other.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "crossdev", "report", str(other), "--out", str(tmp_path / "o")],
                          cwd=repo_root, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"crossdev report: error: {other}: {expected}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_usage_errors_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        render_main(["--out", str(tmp_path)])
    assert e.value.code == 2
    assert "BUNDLE" in capsys.readouterr().err


def test_case_id_with_script_renders_as_text_everywhere(tmp_path):
    cases = [sample.case(XSS, "context", status="fail", message=f"msg {XSS} & more"),
             sample.case("ok.case", "context")]
    doc = sample.bundle("cpu", cases, host=f"host{XSS}")
    rc, out = render(tmp_path, write(tmp_path / "xss.json", doc))
    assert rc == 0
    html = out["index.html"]
    assert XSS not in html and "<script>alert" not in html
    assert html.count("<script") == 1  # the report's own script only
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "<script>" not in out["summary.md"] and "&lt;script&gt;" in out["summary.md"]
    names = [tc.get("name") for tc in ET.fromstring(out["junit.xml"]).iter("testcase")]
    assert XSS in names  # XML-escaped on disk, the exact id once parsed


def test_simulated_passes_are_labelled_and_never_counted_real(tmp_path):
    cases = [sample.ops_case("rms_norm", "mps", "float32", impl, execution="simulated")
             for impl in ("fused", "fallback")]
    doc = sample.bundle("cpu", cases, simulated=True, simulate_spec="mps")
    rc, out = render(tmp_path, write(tmp_path / "sim.json", doc))
    assert rc == 0
    assert "0 passed on real devices, 2 passed simulated" in out["summary.md"]
    html = out["index.html"]
    assert "0 case(s) passed on real devices; 2 passed against simulated" in html
    board = re.search(r'<table class="grid" id="scoreboard-table">.*?</table>', html).group(0)
    assert "SIMULATED" in board and "cell-sim" in board
    classnames = {tc.get("classname") for tc in ET.fromstring(out["junit.xml"]).iter("testcase")}
    assert classnames == {"crossdev.cpu@runner-1+sim.ops.simulated"}


def scoreboard_cell(html, column_index):
    board = re.search(r'id="scoreboard-table">(.*?)</table>', html).group(1)
    row = re.search(r"<tbody><tr>(.*?)</tr>", board).group(1)
    return re.findall(r"<td[^>]*>.*?</td>", row)[column_index]


def test_scoreboard_cell_keeps_the_worst_impl_and_status(tmp_path):
    cases = [sample.ops_case("swiglu", "cpu", "float16", "fused", max_ulp=1, max_abs=1e-4),
             sample.ops_case("swiglu", "cpu", "float16", "fallback", max_ulp=7, max_abs=2e-3, status="fail"),
             sample.ops_case("swiglu", "cpu", "float16", "torchscript", max_ulp=2, max_abs=5e-4)]
    rc, out = render(tmp_path, write(tmp_path / "b.json", sample.bundle("cpu", cases)))
    assert rc == 0  # render does not gate
    cell = scoreboard_cell(out["index.html"], 2)
    assert "golden: ulp 7, abs 0.002" in cell
    assert 'data-status="fail"' in cell and "cell-bad" in cell


def test_pairwise_uses_digests_across_machines(tmp_path):
    a = sample.bundle("cpu", [sample.ops_case("rotary", "cpu", "float32", "fused", digest="aa", max_abs=1e-6)],
                      host="h1")
    b = sample.bundle("cuda", [sample.ops_case("rotary", "cuda", "float32", "fused", digest="bb", max_abs=2e-6)],
                      host="h2")
    rc, out = render(tmp_path, write(tmp_path / "a.json", a), write(tmp_path / "b.json", b))
    pairwise = re.search(r'id="pairwise">(.*?)</table>', out["index.html"]).group(1)
    assert "differs" in pairwise and "identical" not in pairwise
    assert "≤ 3e-06" in pairwise


def test_redirect_table_marks_a_failing_cell(tmp_path):
    def entry(req, host, override, status="pass"):
        return sample.case(f"table.{req}.{host}.override-{override}", "redirect", status=status,
                           execution="simulated", message="expected cuda:0" if status != "pass" else "",
                           details={"trace": f"{req} -> cpu [honored, via create] why"})
    cases = [entry("cpu", "cuda-x1", "off", status="fail"), entry("cpu", "cuda-x1", "on"),
             entry("cpu", "cpu-only", "off"), entry("cpu", "cpu-only", "on")]
    rc, out = render(tmp_path, write(tmp_path / "r.json", sample.bundle("cpu", cases)))
    table = re.search(r'id="redirect-table">(.*?)</table>', out["index.html"]).group(1)
    assert "Accelerator CUDA (1 device)" in table and "CPU-Only" in table
    cells = re.findall(r'<td class="(cell-\w+)" data-status="(\w+)"', table)
    assert cells == [("cell-bad", "fail"), ("cell-ok", "pass")]
    assert "FAIL" in table and "expected cuda:0" in table


def test_redirect_table_names_an_older_bundles_action_as_version_3_does(tmp_path):
    """Bundle version 3 renamed the redirect action `fallback` to `substituted`; a version 2 bundle
    reads with the new name, so one table never mixes the two words for one action."""
    def bundle(version):
        trace = f"none -> cpu [{'fallback' if version < 3 else 'substituted'}, via create] why"
        doc = sample.bundle("cpu", [sample.case("table.none.cpu-only.override-off", "redirect", execution="simulated",
                                                details={"trace": trace})])
        doc["schema_version"] = version
        return doc
    for version in (2, 3):
        rc, out = render(tmp_path, write(tmp_path / f"v{version}.json", bundle(version)))
        table = re.search(r'id="redirect-table">(.*?)</table>', out["index.html"]).group(1)
        assert rc == 0 and "; substituted;" in table and "fallback" not in table, (version, table)


def test_trends_need_history_and_show_each_run(tmp_path, demo):
    old = sample.bundle("cpu", [sample.case("a", "context", status="fail")], host="linux-cpu",
                        created="2025-12-01T00:00:00Z")
    rc, out = render(tmp_path, demo["cpu.json"], extra=["--history", str(write(tmp_path / "old.json", old))])
    assert rc == 0
    trends = re.search(r'id="trends-table">(.*?)</table>', out["index.html"]).group(1)
    assert "2025-12-01T00:00:00Z" in trends and "2026-01-01T00:00:00Z" in trends
    rc, out = render(tmp_path, demo["cpu.json"])
    assert 'id="trends"' not in out["index.html"]


def test_bench_charts_from_embedded_google_benchmark_json(tmp_path):
    bench = sample.bench_json("cpu", {"gelu_tanh/fused/float32/1024": 100.0, "gelu_tanh/fallback/float32/1024": 400.0},
                              bw_util={"gelu_tanh/fused/float32/1024": 0.5})
    doc = sample.bundle("cpu", [sample.case("a", "context")], benchmarks=bench)
    rc, out = render(tmp_path, write(tmp_path / "b.json", doc))
    section = re.search(r'id="benchmarks">(.*?)</section>', out["index.html"]).group(1)
    assert "4.00x" in section  # 400 ns fallback / 100 ns fused
    assert "50%" in section and "<svg" in section


@pytest.mark.parametrize("entry", [["-m", "crossdev", "report"], ["-m", "crossdev.report"]])
def test_command_line_entry_points(tmp_path, demo, repo_root, entry):
    proc = subprocess.run([sys.executable, *entry, str(demo["cpu.json"]), "--out", str(tmp_path / "o")],
                          cwd=repo_root, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "index.html").stat().st_size > 1000
