"""Device kinds whose runtime is a Python package (crossdev/runtimes.py, runner/python_runtimes.h):
torch_xla's `xla`. The engine probes them in a child; `crossdev devices` lists a working one as real
and says why a missing or broken one is absent, naming both versions, and never crashes. A C++
suite's case on a kind that is real only through such a runtime is not_run with the reason (the
engine's process has not imported it). Stand-in `torch_xla` packages on PYTHONPATH play each part;
the real one runs under `make xla` (docs/xla.md)."""
import json
import os
import textwrap

import pytest
import torch

from conftest import BUILD_DIR, INSTALLED

TORCH_RELEASE = ".".join(torch.__version__.split("+")[0].split(".")[:2])


def stand_in(tmp_path, version, init="", runtime=None):
    """A package `torch_xla` with its dist-info at `version`; `init` is its __init__.py."""
    root = tmp_path / "site"
    pkg = root / "torch_xla"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(init))
    if runtime is not None:
        (pkg / "runtime.py").write_text(textwrap.dedent(runtime))
    info = root / f"torch_xla-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch-xla\nVersion: {version}\n")
    (info / "RECORD").write_text("")
    return root


def env_with(root):
    paths = [str(root)] + ([] if INSTALLED else [str(BUILD_DIR / "python")]) + [os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(filter(None, paths)), "CROSSDEV_PYTHON_RUNTIMES_PROBED": ""}


def devices(cli, env):
    text = cli("devices", env=env)
    js = cli("devices", "--json", env=env)
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    return text.stdout, json.loads(js.stdout)


def xla_report(doc):
    return next(r for r in doc["python_runtimes"] if r["kind"] == "xla")


@pytest.fixture
def no_inherited_probe(monkeypatch):
    monkeypatch.delenv("CROSSDEV_PYTHON_RUNTIMES_PROBED", raising=False)


def test_without_torch_xla_the_kind_is_absent_and_said_so(cli, tmp_path, no_inherited_probe):
    env = env_with(tmp_path)
    env.pop("CROSSDEV_PYTHON_RUNTIMES_PROBED")
    text, doc = devices(cli, env)
    report = xla_report(doc)
    assert report["status"] == "absent" and "torch_xla is not installed" in report["reason"], report
    assert "xla   absent: torch_xla is not installed" in text
    assert all(d["kind"] != "xla" or d["provenance"] != "real" for d in doc["devices"])


def test_a_torch_xla_built_for_another_torch_is_absent_naming_both_versions(cli, tmp_path, no_inherited_probe):
    root = stand_in(tmp_path, "1.99.0", init="raise ImportError('undefined symbol: _ZN3c10 (must never be imported)')\n")
    env = env_with(root)
    env.pop("CROSSDEV_PYTHON_RUNTIMES_PROBED")
    text, doc = devices(cli, env)
    reason = xla_report(doc)["reason"]
    assert "torch_xla 1.99.0 needs torch 1.99" in reason and torch.__version__ in reason, reason
    assert "must never be imported" not in reason  # judged by the versions, before any import
    assert "xla   absent: torch_xla 1.99.0 needs torch 1.99" in text


def test_a_torch_xla_whose_import_fails_is_absent_with_the_error(cli, tmp_path, no_inherited_probe):
    root = stand_in(tmp_path, TORCH_RELEASE + ".0", init="raise ImportError('libtpu.so: cannot open shared object file')\n")
    env = env_with(root)
    env.pop("CROSSDEV_PYTHON_RUNTIMES_PROBED")
    _, doc = devices(cli, env)
    reason = xla_report(doc)["reason"]
    assert reason.startswith(f"import torch_xla {TORCH_RELEASE}.0 failed with torch {torch.__version__}: ImportError: "
                             "libtpu.so: cannot open shared object file"), reason


def test_a_working_runtime_is_a_real_kind_and_the_cpp_suites_say_they_cannot_run_on_it(cli, tmp_path, no_inherited_probe):
    """The engine's process never imports torch_xla: an ops case on xla is not_run with the reason,
    never an error from a kernel the process does not have."""
    root = stand_in(tmp_path, TORCH_RELEASE + ".0", init="",
                    runtime="def device_type():\n    return 'CPU'\n\ndef global_runtime_device_count():\n    return 1\n")
    env = env_with(root)
    env.pop("CROSSDEV_PYTHON_RUNTIMES_PROBED")
    env["PJRT_DEVICE"] = "CPU"
    _, doc = devices(cli, env)
    assert xla_report(doc)["status"] == "real", doc
    xla = next(d for d in doc["devices"] if d["kind"] == "xla")
    assert xla["provenance"] == "real" and xla["count"] == 1
    name = xla["properties"][0]["name"]
    assert name.startswith("xla:0 (torch_xla ") and "PJRT's CPU client" in name and "not a TPU" in name, name
    assert "(PJRT_DEVICE=CPU)" in name

    bundle = tmp_path / "b.json"
    proc = cli("run", "--matrix", "matrices/ops.yaml", "--filter", "ops.modulate", "--out", bundle, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(bundle.read_text())
    on_xla = [c for c in doc["cases"] if "/xla/" in c["id"]]
    assert on_xla and all(c["status"] == "skip" and c["execution"] == "not_run" for c in on_xla), on_xla
    assert "real on this host through a Python runtime" in on_xla[0]["message"], on_xla[0]
    on_cpu = [c for c in doc["cases"] if "/cpu/" in c["id"]]
    assert on_cpu and all(c["status"] == "pass" for c in on_cpu)
    assert doc["execution_target"]["device_kind"] == "xla" and "not a TPU" in doc["execution_target"]["device_model"]


def test_the_probe_is_made_once_per_run_and_inherited_by_the_isolation_workers(cli, tmp_path, no_inherited_probe):
    """A stand-in that counts its imports: `crossdev run` with isolation workers imports it once."""
    counter = tmp_path / "imports"
    root = stand_in(tmp_path, TORCH_RELEASE + ".0",
                    init=f"open({str(counter)!r}, 'a').write('x')\n",
                    runtime="def device_type():\n    return 'CPU'\n\ndef global_runtime_device_count():\n    return 1\n")
    env = env_with(root)
    env.pop("CROSSDEV_PYTHON_RUNTIMES_PROBED")
    proc = cli("run", "--matrix", "matrices/context.yaml", "--filter", "ctx.autocast.*",
               "--out", tmp_path / "b.json", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert counter.read_text() == "x"


def test_loading_a_runtime_starts_it_before_any_backward(tmp_path):
    """torch_xla counts no device until its PJRT client starts; LibTorch's autograd engine sizes its
    per-device queues at the process's first backward, so a worker must start the runtime right after
    importing it (runtimes.py `start`), or a backward on xla:0 fails an internal assert."""
    import subprocess
    import sys
    marker = tmp_path / "started"
    root = stand_in(tmp_path, TORCH_RELEASE + ".0", init="",
                    runtime=f"def device_type():\n    return 'CPU'\n\ndef global_runtime_device_count():\n"
                            f"    open({str(marker)!r}, 'w').write('started')\n    return 1\n")
    env = {**os.environ, **env_with(root)}
    proc = subprocess.run([sys.executable, "-c", "from crossdev import runtimes; runtimes.load('xla')"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == "started"


WORKING_RUNTIME = "def device_type():\n    return 'CPU'\n\ndef global_runtime_device_count():\n    return 1\n"


def run_cases(cli, env, matrix, out):
    proc = cli("run", "--matrix", matrix, "--out", out, env=env)
    return proc, (json.loads(out.read_text())["cases"] if out.exists() else [])


def test_redirect_rows_on_this_host_resolve_against_the_real_xla(cli, tmp_path, no_inherited_probe):
    """matrices/xla/redirect_xla.yaml (`host: this`, `when_host_has: xla`): real cases where the host has a
    real xla, skips where it has none; a wrong expectation on the real host fails."""
    env = env_with(stand_in(tmp_path, TORCH_RELEASE + ".0", init="", runtime=WORKING_RUNTIME))
    env.pop("CROSSDEV_PYTHON_RUNTIMES_PROBED")
    proc, cases = run_cases(cli, env, "matrices/xla/redirect_xla.yaml", tmp_path / "real.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert cases and all(c["status"] == "pass" and c["execution"] == "real" for c in cases), cases
    assert all("xla x1 (real)" in c["device"] for c in cases), cases[0]

    without = env_with(tmp_path / "nothing")
    without.pop("CROSSDEV_PYTHON_RUNTIMES_PROBED")
    proc, cases = run_cases(cli, without, "matrices/xla/redirect_xla.yaml", tmp_path / "absent.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(c["status"] == "skip" and c["execution"] == "not_run" and
               c["message"] == "this host has no real xla (when_host_has)" for c in cases), cases

    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("suite: redirect\ncases:\n  - {id: w.tpu, source: test, intent: wrong on purpose,\n"
                     "     host: this, when_host_has: xla, request: tpu, expect: cpu, action: honored}\n")
    proc, cases = run_cases(cli, env, wrong, tmp_path / "wrong.json")
    assert proc.returncode == 1 and cases[0]["status"] == "fail", proc.stdout + proc.stderr
    assert "expected cpu [honored], got xla:0 [honored]" in cases[0]["message"], cases[0]


def test_when_host_has_only_on_a_row_about_this_host(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("suite: redirect\ncases:\n  - {id: b.tpu, source: test, intent: bad,\n"
                   "     host: tpu, when_host_has: xla, request: tpu, expect: xla:0, action: honored}\n")
    proc = cli("run", "--matrix", bad, "--out", tmp_path / "b.json")
    assert proc.returncode == 2 and f"{bad}:4:" in proc.stderr and "only a row with host: this" in proc.stderr, \
        proc.stderr
