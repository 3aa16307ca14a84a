"""The opinfo suite's axes that are real on a CPU-only host (docs/opinfo.md): the CPU-capability axis
(the same samples under ATEN_CPU_CAPABILITY=default and avx2, in their own processes) and the compile
variant (torch.compile against eager on the same samples). Fast: one op, few samples; the judging
paths (fail, error, crash, a capability the host lacks) in-process, without op_db."""
import faulthandler
import pickle
import textwrap
import types

import pytest
import torch

from test_opinfo_worker import run_request, worker


def _cases(lines):
    return {e["id"]: e for e in lines if e["event"] == "case"}


def test_each_capability_runs_the_same_samples_in_its_own_process_against_the_golden():
    """softmax's vectorised kernels differ bitwise between default and avx2 (torch 2.13, 4 samples):
    seen here only if the avx2 process really dispatched to other kernels than the golden's."""
    from crossdev.opinfo.cpu_capability import unavailable_reason
    rc, lines, err = worker(run_request(opinfo="softmax", cpu_capabilities=["default", "avx2"], max_samples=4))
    assert rc == 0, err
    assert lines[0] == {"event": "plan", "count": 1} and lines[-1] == {"event": "done"}, lines
    (case_id, case), = _cases(lines).items()
    assert case_id == "t.row/softmax/cpu@avx2/float32/forward", "one case per op x capability x dtype x check"
    if unavailable_reason("avx2"):
        assert case["status"] == "skip" and case["message"] == unavailable_reason("avx2"), case  # skip, with why
        return
    assert case["status"] == "pass" and case["execution"] == "real", f"pass, real: {case}"
    d, m = case["details"], case["metrics"]
    assert d["axis"] == "cpu_capability" and d["cpu_capability"] == "avx2" and d["golden"] == "cpu@default"
    assert d["device_kind"] == "cpu@avx2" and d["tolerance_source"] == "crossdev per-dtype table"
    assert float(m["samples"]) == 4 and float(m["failing_samples"]) == 0
    assert float(m["bitwise_differing_samples"]) >= 1, f"avx2 ran the golden's kernels: {d['bitwise']}"
    assert "differ bitwise from cpu@default" in d["bitwise"] and "the tolerance judges them" in d["bitwise"]


def test_an_unknown_capability_is_exit_2_naming_file_line_and_the_valid_choices(cli, tmp_path):
    matrix = tmp_path / "caps.yaml"
    matrix.write_text(textwrap.dedent("""\
        suite: opinfo
        cases:
          - {id: t.caps, source: "issue 24", intent: "test", opinfo: softmax, devices: [cpu],
             cpu_capabilities: [default, avx3], dtypes: [float32]}
        """))
    proc = cli("run", "--matrix", matrix, "--out", tmp_path / "b.json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{matrix}:4:" in proc.stderr and "unknown CPU capability 'avx3'" in proc.stderr, proc.stderr
    assert "expected one of default, avx2, avx512" in proc.stderr, proc.stderr


def test_row_problems_name_what_a_capability_row_needs():
    from crossdev.opinfo.cpu_capability import row_problems
    good = {"devices": ["cpu"], "cpu_capabilities": ["default", "avx2", "avx512"]}
    assert row_problems(good) == [] and row_problems({"devices": ["mps"]}) == []
    assert [k for k, _ in row_problems(dict(good, cpu_capabilities=["default"]))] == ["cpu_capabilities"]
    assert [k for k, _ in row_problems(dict(good, cpu_capabilities=["avx2", "avx2"]))] == ["cpu_capabilities"]
    assert [k for k, _ in row_problems(dict(good, devices=["cpu", "mps"]))] == ["devices"]
    assert [k for k, _ in row_problems(dict(good, variants=["compile"]))] == ["variants"]


def test_a_capability_the_host_cannot_run_is_skipped_with_the_reason(monkeypatch):
    from crossdev.opinfo import cpu_capability
    monkeypatch.setattr(cpu_capability.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(torch.cpu, "_is_avx512_supported", lambda: False)
    assert cpu_capability.unavailable_reason("avx512") == "this CPU lacks avx512 (torch.cpu._is_avx512_supported() is False)"
    assert cpu_capability.unavailable_reason("default") is None, "every CPU runs the default kernels"
    monkeypatch.setattr(cpu_capability.platform, "machine", lambda: "aarch64")
    assert cpu_capability.unavailable_reason("avx2") == "not an x86 CPU (aarch64): no avx2"


def _runner_comparing(golden, actual):
    from crossdev.opinfo.cpu_capability import Runner
    runner = Runner({"row": {"id": "t", "cpu_capabilities": ["default", "avx2"]}}, [], 0, 0)
    runner.golden_raised = {0: 0}
    op = types.SimpleNamespace(name="softmax", aten_name="softmax", decorators=())
    case = {"id": "t/softmax/cpu@avx2/float32/forward", "status": "pass", "metrics": {},
            "details": {"cpu_capability": "avx2", "check": "forward"}}
    return runner._compare(op, "softmax", "float32", 0, golden, actual, case, torch.float32)


def _record(index, result, digest):
    return {"index": index, "shapes": [(3,)], "status": "ok", "result": result, "digest": digest}


def test_a_capability_beyond_the_tolerance_fails_and_one_that_raises_is_an_error():
    x = torch.tensor([1.0, 2.0, 3.0])
    golden = [_record(0, x, "a"), _record(1, x, "a")]
    within = _runner_comparing(golden, [_record(0, x, "a"), _record(1, x * (1 + 1e-7), "b")])
    assert within["status"] == "pass" and within["metrics"]["bitwise_differing_samples"] == 1, within
    beyond = _runner_comparing(golden, [_record(0, x, "a"), _record(1, x * 1.01, "b")])
    assert beyond["status"] == "fail", beyond
    assert beyond["message"].startswith("1 of 2 samples differ from cpu@default; first: sample 1 shapes [(3,)]")
    raised = _runner_comparing(golden, [_record(0, x, "a"), {"index": 1, "shapes": [(3,)], "status": "raised",
                                                             "message": "RuntimeError: boom"}])
    assert raised["status"] == "error" and "raised under avx2 but not under default: RuntimeError: boom" in raised["message"]


def test_a_capability_process_that_hangs_is_killed_and_the_case_says_it_timed_out(tmp_path):
    """time.sleep as the op (60 s) under a 2 s case timeout: the process is killed and the reason is the timeout,
    not the SIGKILL that ended it."""
    import time
    from crossdev.opinfo.cpu_capability import _Process
    job = {"name": "sleep", "variant": "function", "check": "forward", "op": pickle.dumps(time.sleep),
           "inplace": None, "samples": [{"index": 0, "input": 60, "args": (), "kwargs": {}, "shapes": [()]}],
           "golden_raised": 0}
    torch.save([job], tmp_path / "jobs.pt")
    process = _Process("default", str(tmp_path / "jobs.pt"), str(tmp_path))
    try:
        assert process.reported == "DEFAULT"
        assert process.run(0, timeout=2) == "timed out after 2 s (case_timeout)"
        assert not process.alive()
    finally:
        process.close()


def test_a_capability_process_that_dies_is_that_cases_crash_not_the_rows(tmp_path):
    """One job kills its process (faulthandler._sigsegv as the op): the case's crash names the signal; the Runner
    starts a new process for the next case (crossdev.opinfo.cpu_capability._results)."""
    from crossdev.opinfo.cpu_capability import _Process
    x = torch.ones(1, dtype=torch.int64)  # faulthandler._sigsegv(x) takes x as its flag, and segfaults
    job = {"name": "segv", "variant": "function", "check": "forward", "op": pickle.dumps(faulthandler._sigsegv),
           "inplace": None, "samples": [{"index": 0, "input": x, "args": (), "kwargs": {}, "shapes": [(1,)]}],
           "golden_raised": 0}
    ok = dict(job, name="neg", op=pickle.dumps(torch.neg))
    torch.save([job, ok], tmp_path / "jobs.pt")
    process = _Process("default", str(tmp_path / "jobs.pt"), str(tmp_path))
    try:
        assert process.reported == "DEFAULT", "torch dispatches to the capability asked for"
        assert process.run(0, timeout=60) == "was killed by signal 11 (SIGSEGV)"
        assert not process.alive()
    finally:
        process.close()
    again = _Process("default", str(tmp_path / "jobs.pt"), str(tmp_path))
    try:
        assert again.run(1, timeout=60) is None
    finally:
        again.close()
    (record,) = torch.load(tmp_path / "default_1.pt", weights_only=False)
    assert record["status"] == "ok" and torch.equal(record["result"], -x)


def test_the_compile_variant_judges_compiled_against_eager_on_the_same_samples(monkeypatch):
    """An op whose compiled form differs from its eager one (torch.compiler.is_compiling()) fails; an
    honest one passes. Dynamo's eager backend stands in for Inductor here (Inductor's C++ codegen costs
    seconds per sample; docs/opinfo.md has an Inductor run)."""
    from crossdev.opinfo import compile_variant
    from crossdev.opinfo.samples import Outcome
    from crossdev.opinfo.tolerances import Tolerance

    def honest(x):
        return torch.sin(x) * 2

    def two_faced(x):
        return torch.sin(x) * (3 if torch.compiler.is_compiling() else 2)

    sample = types.SimpleNamespace(input=torch.linspace(0.1, 1.0, 8), args=(), kwargs={})
    sample.transform = lambda f: types.SimpleNamespace(input=f(sample.input), args=(), kwargs={})
    tol = Tolerance(1.3e-6, 1e-5, "test")
    monkeypatch.setattr(compile_variant, "BACKEND", "eager")
    good = compile_variant.run_sample(honest, sample, "cpu", "forward", tol, values=True)
    assert isinstance(good, Outcome) and good.mismatch == "", good
    bad = compile_variant.run_sample(two_faced, sample, "cpu", "forward", tol, values=True)
    assert bad.mismatch.startswith("output[0]:"), bad
