"""The committed real-GPU bundle (reports/samples/2026-11-23-h100.json.gz: the bundle `ci/gpu/run.sh`
wrote on a lent H100, unedited, gzip-compressed; crossdev.report reads it as it is) merges with a CPU bundle made
here into one cross-machine report whose pairwise section compares real cuda with real cpu."""
import gzip
import html
import json
import re
import subprocess
import sys

SAMPLE = "reports/samples/2026-11-23-h100.json.gz"


def sample(repo_root):
    return json.loads(gzip.decompress((repo_root / SAMPLE).read_bytes()))


def pairwise_rows(index_html):
    section = index_html[index_html.find('id="pairwise"'):]
    section = section[:section.find("</table>")]
    for row in re.findall(r"<tr>(.*?)</tr>", section, re.S):
        cells = [html.unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        if cells:
            yield cells


def test_the_gpu_sample_is_labelled_real_cuda(repo_root):
    bundle = sample(repo_root)
    target = bundle["execution_target"]
    assert target["device_kind"] == "cuda" and target["simulated"] is False
    kinds = {d["kind"]: d["provenance"] for d in target["devices"]}
    assert kinds == {"cpu": "real", "cuda": "real"}
    cuda_ops = [c for c in bundle["cases"] if c["suite"] == "ops" and c["device"].startswith("cuda")]
    assert cuda_ops and all(c["execution"] == "real" for c in cuda_ops)
    assert bundle["summary"]["fail"] == 0 and bundle["summary"]["error"] == 0


def test_merged_with_a_cpu_bundle_the_pairwise_section_compares_real_cuda_with_real_cpu(cli, repo_root, tmp_path):
    cpu_bundle = tmp_path / "cpu.json"
    r = cli("run", "--filter", "ops.gelu_tanh*", "--quiet", "--out", cpu_bundle)
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "report"
    rendered = subprocess.run([sys.executable, "-m", "crossdev", "report", str(repo_root / SAMPLE), str(cpu_bundle),
                               "--out", str(out)], cwd=repo_root, capture_output=True, text=True)
    assert rendered.returncode == 0, rendered.stderr
    gpu_runner = sample(repo_root)["execution_target"]
    rows = list(pairwise_rows((out / "index.html").read_text()))
    cross = [r for r in rows if r[0] == "gelu_tanh" and r[2].endswith("/cuda") and r[3].endswith("/cpu")
             and r[2].split("/")[0] != r[3].split("/")[0]]
    assert cross, rows[:5]
    assert {r[1] for r in cross} >= {"float32", "bfloat16"}
    assert all(r[6] == "real" for r in cross)
    assert gpu_runner["device_kind"] == "cuda"


def test_a_damaged_gzip_bundle_is_bad_input_not_a_traceback(repo_root, tmp_path):
    """The validator reads .gz bundles; a truncated one is exit 2 with the path and what was expected."""
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes((repo_root / SAMPLE).read_bytes()[:5000])
    good = subprocess.run([sys.executable, "-m", "crossdev.report.validate", str(repo_root / SAMPLE)], cwd=repo_root,
                          capture_output=True, text=True)
    bad = subprocess.run([sys.executable, "-m", "crossdev.report.validate", str(cut)], cwd=repo_root,
                         capture_output=True, text=True)
    assert good.returncode == 0, good.stdout + good.stderr
    assert bad.returncode == 2 and "cut.json.gz" in bad.stdout + bad.stderr
    assert "gzip" in bad.stdout + bad.stderr and "Traceback" not in bad.stderr


def test_the_version_1_sample_renders_with_no_uninformative_ulp_figure(repo_root, tmp_path):
    """The sample is schema 1: unfloored figures, up to 4.4e18 "ulps" on passing float64 cases (docs/parity.md,
    "ULP error"). Its scoreboard shows a ULP figure only up to 2^(mantissa bits) of the row's dtype."""
    from crossdev.report.parity import MANTISSA_BITS
    from crossdev.report.render import main as render_main

    assert sample(repo_root)["schema_version"] == 1
    out = tmp_path / "report"
    assert render_main([str(repo_root / SAMPLE), "--out", str(out)]) == 0
    board = re.search(r'id="scoreboard-table">(.*?)</table>', (out / "index.html").read_text(), re.S).group(1)
    shown, hidden = 0, 0
    for row in re.findall(r"<tr>(.*?)</tr>", board, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        if not cells:
            continue  # the header
        dtype = cells[1]
        for figure in re.findall(r">[\w ]+: ulp ([^,<]+), abs", row):
            assert float(figure) <= 2.0 ** MANTISSA_BITS[dtype], (dtype, figure)
            shown += 1
        hidden += row.count(" not shown: beyond 2^")
    assert shown > 100 and hidden > 0, (shown, hidden)
