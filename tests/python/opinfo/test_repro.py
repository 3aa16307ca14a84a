"""`crossdev repro` (issue 51, docs/repro.md): a failing opinfo case's standalone script.

What is proved here, and how:
- the script imports torch only: it runs on the CPU in `python3 -I` with `crossdev` and op_db made unimportable
  (sys.modules entries set to None, so any import of them raises), and exits 0 there;
- it reproduces the failure: on sim with the mutant library loaded it exits 1, and on sim without the mutant
  it exits 0, so the 1 is the mutant's. sim is crossdev's simulated backend: the launcher below (the one hook)
  registers it and loads the mutant before it runs the script as __main__; the script's own code is the same
  file the CPU run executed (no crossdev in it);
- a models case (the DiT block with the test-only wrong aten::gelu of tests/model_faults): the script is the first
  divergent module's first ATen op out of tolerance, called alone with the CPU golden's inputs to it; the same proof;
- a crash case (tests/opinfo_faults' segfaulting tan on sim): the engine's rerun of the case alone records the
  sample it died on, and the script, the call in a child process, exits 1 while the child dies and 0 without the fault;
- bad input (a case not in the bundle, a case that passed, a bundle from another torch without the case's
  recorded sample, a file that is no bundle) exits 2 naming the file and what was expected.
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, requires_sim

pytestmark = requires_sim

TANH = "crossdev_test_aten_mutant_tanh_off_by_1_in_256"
RUNNING_STATS = "crossdev_test_aten_mutant_batch_norm_running_stats_frozen"
GRAPH_CACHE = "crossdev_test_aten_mutant_pixel_shuffle_graph_cache"
MATRIX = """suite: opinfo
cases:
  - {id: r, source: "issue 51", intent: "crossdev repro", opinfo: [tanh, sin, native_batch_norm, nn.functional.pixel_shuffle], devices: [cuda],
     dtypes: [float32], checks: [forward, backward], max_samples: 3}
"""
ERROR_MATRIX = """suite: opinfo
cases:
  - {id: e, source: "issue 51", intent: "crossdev repro of an error", opinfo: [linalg.solve_ex], devices: [mps],
     dtypes: [float32], checks: [forward], max_samples: 2}
"""
# the test's hook: sim (and the libraries) set up in this process, then the generated script as __main__
LAUNCHER = """import runpy, sys
import torch, crossdev
crossdev.sim.register()
profile, libs, script = sys.argv[1], sys.argv[2], sys.argv[3]
crossdev.sim.set_profile(profile)
for lib in filter(None, libs.split(os.pathsep)):
    torch.ops.load_library(lib)
sys.argv = [script, "--device", "sim", *sys.argv[4:]]
runpy.run_path(script, run_name="__main__")
""".replace("import runpy, sys", "import os, runpy, sys")
# the script alone, with crossdev and op_db unimportable
ISOLATED = """import runpy, sys
for name in ("crossdev", "torch.testing._internal.common_methods_invocations", "torch.testing._internal.opinfo"):
    sys.modules[name] = None
script = sys.argv[1]
sys.argv = [script, "--device", "cpu"]
runpy.run_path(script, run_name="__main__")
"""


def _env_without_pythonpath():
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def run_isolated(script):
    return subprocess.run([sys.executable, "-I", "-c", ISOLATED, str(script)], capture_output=True, text=True,
                          env=_env_without_pythonpath(), cwd=script.parent, timeout=300)


def run_on_sim(script, profile, libraries, *args):
    return subprocess.run([sys.executable, "-c", LAUNCHER, profile, os.pathsep.join(map(str, libraries)), str(script),
                           *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def mutant_run(cli, tmp_path_factory, built_library):
    tmp = tmp_path_factory.mktemp("repro")
    (tmp / "m.yaml").write_text(MATRIX)
    bundle = tmp / "bundle.json"
    libraries = [built_library(TANH), built_library(RUNNING_STATS), built_library(GRAPH_CACHE)]
    proc = cli("run", "--matrix", tmp / "m.yaml", "--simulate", "cuda", "--out", bundle,
               *[a for lib in libraries for a in ("--load-library", lib)])
    assert bundle.exists(), proc.stdout + proc.stderr
    cases = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}
    return tmp, bundle, cases, libraries


@pytest.mark.parametrize("case_id", ["r/tanh/cuda/float32/forward", "r/tanh/cuda/float32/backward",
                                     "r/native_batch_norm/cuda/float32/forward"])
def test_the_script_fails_on_the_mutant_and_passes_on_the_cpu_and_without_it(mutant_run, cli, case_id):
    tmp, bundle, cases, libraries = mutant_run
    assert cases[case_id]["status"] == "fail", cases[case_id]
    assert cases[case_id]["details"]["reproduce"].startswith(f"crossdev repro BUNDLE '{case_id}'")
    out = tmp / case_id.replace("/", "_")
    proc = cli("repro", bundle, case_id, "--out", out)
    assert proc.returncode == 0, proc.stderr
    script = out / "repro.py"
    text = script.read_text()
    assert "import crossdev" not in text and "common_methods_invocations" not in text
    cpu = run_isolated(script)
    assert cpu.returncode == 0 and "OK: cpu agrees" in cpu.stdout, cpu.stdout[-2000:] + cpu.stderr[-2000:]
    bad = run_on_sim(script, "cuda-like", libraries)
    assert bad.returncode == 1, bad.stdout[-2000:] + bad.stderr[-2000:]
    assert "FAIL:" in bad.stdout and "worst element" in bad.stdout, bad.stdout[-2000:]
    good = run_on_sim(script, "cuda-like", [])
    assert good.returncode == 0, good.stdout[-2000:] + good.stderr[-2000:]


def test_a_failure_that_needs_the_samples_before_it_is_reproduced_by_replaying_them(mutant_run, cli):
    """The graph-cache mutant (pixel_shuffle reuses the first result of the same input sizes, torch_xla 2.9's
    bug): sample 1 fails only after sample 0 ran. The script replays sample 0 first: exit 1 with the mutant, 0
    with --alone (the failing sample by itself) and 0 without the mutant."""
    tmp, bundle, cases, libraries = mutant_run
    case_id = "r/nn.functional.pixel_shuffle/cuda/float32/forward"
    assert cases[case_id]["status"] == "fail", cases[case_id]
    out = tmp / "graph_cache"
    assert cli("repro", bundle, case_id, "--out", out).returncode == 0
    script = out / "repro.py"
    assert "BEFORE = [\n    (0, " in script.read_text()
    assert run_isolated(script).returncode == 0
    bad = run_on_sim(script, "cuda-like", libraries)
    assert bad.returncode == 1 and "FAIL:" in bad.stdout, bad.stdout[-2000:]
    alone = run_on_sim(script, "cuda-like", libraries, "--alone")
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-2000:]
    assert run_on_sim(script, "cuda-like", []).returncode == 0


def test_an_update_in_place_is_what_the_batch_norm_script_catches(mutant_run, cli):
    tmp, bundle, _, libraries = mutant_run
    case_id = "r/native_batch_norm/cuda/float32/forward"
    out = tmp / "bn"
    assert cli("repro", bundle, case_id, "--out", out).returncode == 0
    bad = run_on_sim(out / "repro.py", "cuda-like", libraries)
    assert "after the call differs on sim" in bad.stdout, bad.stdout[-2000:]


def test_an_error_case_script_is_the_call_alone(cli, tmp_path):
    (tmp_path / "e.yaml").write_text(ERROR_MATRIX)
    bundle = tmp_path / "e.json"
    proc = cli("run", "--matrix", tmp_path / "e.yaml", "--simulate", "mps", "--out", bundle)
    case = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}["e/linalg.solve_ex/mps/float32/forward"]
    assert case["status"] == "error", (case, proc.stderr[-2000:])
    assert cli("repro", bundle, case["id"], "--out", tmp_path / "s").returncode == 0
    script = tmp_path / "s" / "repro.py"
    assert run_isolated(script).returncode == 0
    raised = run_on_sim(script, "mps-like", [])
    assert raised.returncode == 1 and "is not currently implemented for the MPS device" in raised.stdout, raised.stdout


def test_a_large_sample_goes_to_a_pt_file_beside_the_script(mutant_run, tmp_path, monkeypatch):
    from crossdev import repro
    _, bundle, _, libraries = mutant_run
    monkeypatch.setattr(repro, "LITERAL_ELEMENTS", 10)
    out = tmp_path / "large"
    assert repro.main([str(bundle), "r/tanh/cuda/float32/forward", "--out", str(out)]) == 0
    assert (out / "repro_tensors.pt").is_file() and "torch.load(" in (out / "repro.py").read_text()
    assert run_isolated(out / "repro.py").returncode == 0
    assert run_on_sim(out / "repro.py", "cuda-like", libraries).returncode == 1


def test_a_sample_recorded_in_the_export_folder_is_read_from_there(mutant_run, tmp_path, monkeypatch):
    """A sample larger than a bundle records inline: written under --export-samples DIR/repro/, named by the case."""
    import torch
    from crossdev import repro
    from crossdev.opinfo import repro_record
    _, bundle, _, libraries = mutant_run
    doc = json.loads(bundle.read_text())
    case = next(c for c in doc["cases"] if c["id"] == "r/tanh/cuda/float32/forward")
    record = json.loads(case["details"].pop("repro_sample"))
    record["tensors"] = [repro_record.tensor_from_doc(t) for t in record["tensors"]]
    monkeypatch.setenv(repro_record.EXPORT_ENV, str(tmp_path / "export"))
    monkeypatch.setattr(repro_record, "INLINE_BYTES", 16)
    repro_record.store(case, record)
    assert "repro_sample" not in case["details"], "too large for the bundle"
    path = case["details"]["repro_sample_file"]
    assert path.startswith(str(tmp_path / "export" / "repro")) and isinstance(torch.load(path, weights_only=False), dict)
    (tmp_path / "b.json").write_text(json.dumps(doc))
    assert repro.main([str(tmp_path / "b.json"), case["id"], "--out", str(tmp_path / "s")]) == 0
    assert run_on_sim(tmp_path / "s" / "repro.py", "cuda-like", libraries).returncode == 1
    os.remove(path)
    assert repro.main([str(tmp_path / "b.json"), case["id"], "--out", str(tmp_path / "s2")]) == 2


CRASH_MATRIX = """suite: opinfo
cases:
  - {id: t, source: "issue 51", intent: "crossdev repro of a crash", opinfo: ["tan*"], devices: [mps], dtypes: [float32],
     checks: [forward], max_samples: 2}
"""


def test_a_crash_case_script_is_the_call_in_a_child_process(cli, tmp_path, built_library):
    """tests/opinfo_faults' tan kernel for sim raises SIGSEGV: the worker dies, nothing of the case was sent. The
    engine runs the case once more alone, its worker writing each sample before the call, so the crash case holds
    the sample it died on; the script runs the call in a child process and exits 1 while that child dies."""
    faults = built_library("crossdev_test_opinfo_faults")
    (tmp_path / "t.yaml").write_text(CRASH_MATRIX)
    bundle = tmp_path / "t.json"
    proc = cli("run", "--matrix", tmp_path / "t.yaml", "--simulate", "mps", "--out", bundle, "--load-library", faults)
    cases = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}
    crash = cases["t/tan/mps/float32/forward"]
    assert crash["status"] == "crash" and "signal 11" in crash["message"], (crash, proc.stderr[-2000:])
    assert json.loads(crash["details"]["repro_sample"])["kind"] == "crashed"
    assert cases["t/tanh/mps/float32/forward"]["status"] == "pass", "the row went on after the crash and its rerun"
    assert cli("repro", bundle, crash["id"], "--out", tmp_path / "s").returncode == 0
    script = tmp_path / "s" / "repro.py"
    assert run_isolated(script).returncode == 0
    died = run_on_sim(script, "mps-like", [faults])
    assert died.returncode == 1 and "killed the process (signal 11)" in died.stdout, died.stdout + died.stderr[-2000:]
    fixed = run_on_sim(script, "mps-like", [])
    assert fixed.returncode == 0 and "returned without raising" in fixed.stdout, fixed.stdout + fixed.stderr[-2000:]


def test_bad_input_exits_2_naming_the_file_and_what_was_expected(mutant_run, cli, tmp_path):
    _, bundle, cases, _ = mutant_run
    unknown = cli("repro", bundle, "r/no_such_op/cuda/float32/forward", "--out", tmp_path / "a")
    assert unknown.returncode == 2 and f"{bundle}: no case 'r/no_such_op/cuda/float32/forward'" in unknown.stderr
    passed = "r/sin/cuda/float32/forward"
    assert cases[passed]["status"] == "pass"
    proc = cli("repro", bundle, passed, "--out", tmp_path / "b")
    assert proc.returncode == 2 and "is pass, it passed: there is nothing to reproduce" in proc.stderr, proc.stderr
    assert not (tmp_path / "b" / "repro.py").exists()
    # another torch's bundle, the case without its recorded sample
    doc = json.loads(bundle.read_text())
    doc["execution_target"]["libtorch_version"] = "1.13.0"
    for case in doc["cases"]:
        case["details"].pop("repro_sample", None)
        case["details"].pop("reproduce", None)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    proc = cli("repro", other, "r/tanh/cuda/float32/forward", "--out", tmp_path / "c")
    assert proc.returncode == 2 and "the bundle is from torch 1.13.0" in proc.stderr and "no exported sample" in proc.stderr
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    proc = cli("repro", junk, "x", "--out", tmp_path / "d")
    assert proc.returncode == 2 and str(junk) in proc.stderr and "not valid JSON" in proc.stderr, proc.stderr
    assert cli("repro", bundle).returncode == 2, "a missing CASE_ID is a usage error"


def test_a_models_case_script_is_the_first_divergent_op_with_the_goldens_inputs(cli, tmp_path, built_library):
    (tmp_path / "mm.yaml").write_text(
        "suite: models\ncases:\n  - {id: t.dit, source: \"issue 51\", intent: \"repro\", "
        "model: \"crossdev_examples.dit:tiny_dit_block\", devices: [mps], dtypes: [float32]}\n")
    fault = built_library("crossdev_test_model_fault_gelu_forward")
    bundle = tmp_path / "bm.json"
    proc = cli("run", "--matrix", tmp_path / "mm.yaml", "--simulate", "mps", "--out", bundle,
               "--import", ROOT / "examples" / "models", "--load-library", fault)
    case = json.loads(bundle.read_text())["cases"][0]
    assert case["status"] == "fail" and case["details"]["first_divergence_op"] == "aten::gelu", (case, proc.stderr[-2000:])
    assert cli("repro", bundle, case["id"], "--out", tmp_path / "s").returncode == 0
    script = tmp_path / "s" / "repro.py"
    assert "fn = torch.ops.aten.gelu.default" in script.read_text()
    assert run_isolated(script).returncode == 0
    bad = run_on_sim(script, "mps-like", [fault])
    assert bad.returncode == 1 and "FAIL:" in bad.stdout, bad.stdout[-2000:] + bad.stderr[-2000:]
    assert run_on_sim(script, "mps-like", []).returncode == 0


def test_op_dbs_callables_are_spelled_as_source_that_does_the_same():
    """The call and output_process_fn_grad as the script spells them: a partial (hardsigmoid's in-place form), a
    lambda whose body is on the next line (leaky_relu's), and closures over functions (svd's fn_U)."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.utils._pytree import tree_flatten
    from crossdev import repro
    from crossdev.opinfo import repro_record

    def spelled(fn):
        defs, expr = repro._callable_source(repro_record.source_of(fn, "test"), "test")
        namespace = {"torch": torch}
        exec(defs, namespace)  # noqa: S102  (the generated script's own definitions)
        return eval(expr, namespace)  # noqa: S307

    ops = {op.name: op for op in op_db}
    x = torch.randn(4, 4)
    for name in ("nn.functional.hardsigmoid", "nn.functional.leaky_relu"):
        a, b = x.clone(), x.clone()
        spelled(ops[name].inplace_variant)(a)
        ops[name].inplace_variant(b)
        assert torch.equal(a, b) and not torch.equal(a, x), name
    checked = 0
    for sample in ops["linalg.svd"].sample_inputs("cpu", torch.float32):
        fn = sample.output_process_fn_grad
        result = ops["linalg.svd"](sample.input, *sample.args, **sample.kwargs)
        mine, theirs = tree_flatten(spelled(fn)(result))[0], tree_flatten(fn(result))[0]
        assert len(mine) == len(theirs) and all(torch.equal(m, t) for m, t in zip(mine, theirs))
        checked += 1
    assert checked >= 3
    with pytest.raises(repro_record.Unrecordable, match="wrapper_set_seed"):
        repro_record.source_of(ops["uniform"].op, "the op's callable")


def test_repro_check_takes_the_genuine_wrong_results_on_real_devices_only(tmp_path, capsys):
    """make xla's check of the scripts (python/crossdev/repro_check.py) picks a `fail` and an `xfail` under a
    numerics entry that ran on a real device; not an unimplemented xfail, a pass, or a simulated case. Its
    script for a case it cannot write is a disagreement (exit 1); a bundle it cannot read is exit 2."""
    from crossdev import repro_check

    def case(i, status, execution="real", expected_class=None):
        details = {"expected_class": expected_class} if expected_class else {}
        return {"id": f"r/op{i}/xla/float32/forward", "suite": "opinfo", "status": status, "execution": execution,
                "details": details}
    cases = [case(0, "fail"), case(1, "xfail", expected_class="numerics"), case(2, "xfail", expected_class="unimplemented"),
             case(3, "pass"), case(4, "fail", execution="simulated"), case(5, "error")]
    assert [c["id"] for c in repro_check.cases_to_check({"cases": cases})] == [cases[0]["id"], cases[1]["id"]]
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps({"schema": "crossdev.bundle", "target": {}, "cases": cases}))
    assert repro_check.main([str(bundle)]) == 1  # no sample recorded: no script, so no proof
    assert "no script" in capsys.readouterr().out
    bundle.write_text(json.dumps({"cases": [cases[3]]}))
    assert repro_check.main([str(bundle)]) == 0 and "nothing checked" in capsys.readouterr().out
    assert repro_check.main([str(tmp_path / "missing.json")]) == 2
