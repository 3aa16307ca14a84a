"""The committed real-GPU bundle (reports/samples/2026-11-23-h100.json, written unedited by
`ci/gpu/run.sh` on a lent H100) merges with a CPU bundle made here into one cross-machine report
whose pairwise section compares real cuda with real cpu."""
import html
import json
import re
import subprocess
import sys

SAMPLE = "reports/samples/2026-11-23-h100.json"


def pairwise_rows(index_html):
    section = index_html[index_html.find('id="pairwise"'):]
    section = section[:section.find("</table>")]
    for row in re.findall(r"<tr>(.*?)</tr>", section, re.S):
        cells = [html.unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        if cells:
            yield cells


def test_the_gpu_sample_is_labelled_real_cuda(repo_root):
    bundle = json.loads((repo_root / SAMPLE).read_text())
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
    rendered = subprocess.run([sys.executable, "reports/render.py", str(repo_root / SAMPLE), str(cpu_bundle),
                               "--out", str(out)], cwd=repo_root, capture_output=True, text=True)
    assert rendered.returncode == 0, rendered.stderr
    gpu_runner = json.loads((repo_root / SAMPLE).read_text())["execution_target"]
    rows = list(pairwise_rows((out / "index.html").read_text()))
    cross = [r for r in rows if r[0] == "gelu_tanh" and r[2].endswith("/cuda") and r[3].endswith("/cpu")
             and r[2].split("/")[0] != r[3].split("/")[0]]
    assert cross, rows[:5]
    assert {r[1] for r in cross} >= {"float32", "bfloat16"}
    assert all(r[6] == "real" for r in cross)
    assert gpu_runner["device_kind"] == "cuda"
