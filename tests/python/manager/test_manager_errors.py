"""Error classification and device_safe recovery through the Python module (seed 003).

The classification rows of matrices/errors.yaml are re-read here with PyYAML and checked
through crossdev.manager.classify, and errors raised by torch itself in Python (not only the
C++ texts) are classified and recovered. Recovered results are compared with
torch.testing.assert_close against a reference computed without any fault.
"""
import pathlib
import warnings

import pytest
import torch
import yaml

MATRICES = pathlib.Path(__file__).resolve().parents[3] / "matrices"


def error_rows():
    doc = yaml.safe_load((MATRICES / "errors.yaml").read_text())
    assert doc["suite"] == "errors"
    return doc["cases"]


CLASSIFY_ROWS = [r for r in error_rows() if "op" not in r and "trigger" not in r]
TRIGGER_ROWS = [r for r in error_rows() if "trigger" in r]


@pytest.fixture(scope="module")
def mgr(crossdev_module):
    return crossdev_module.manager


@pytest.mark.parametrize("row", CLASSIFY_ROWS, ids=[r["id"] for r in CLASSIFY_ROWS])
def test_matrix_text_classifies(mgr, row):
    got = mgr.classify(row["text"], row.get("exception", "RuntimeError"))
    assert (got["category"] if got else "unclassified") == row["expect_category"]


@pytest.mark.parametrize("row", TRIGGER_ROWS, ids=[r["id"] for r in TRIGGER_ROWS])
def test_trigger_raises_the_matrix_text_in_python(mgr, row):
    """The same real LibTorch error, seen from Python after torch's exception translation."""
    with pytest.raises(Exception) as info:
        mgr.fire_trigger(row["trigger"])
    # With torch imported, some meta kernels are torch's Python meta registrations, whose text
    # differs from TensorIterator's (cpu+meta add): such rows list both texts.
    texts = row["text"] if isinstance(row["text"], list) else [row["text"]]
    assert any(t in str(info.value) for t in texts), str(info.value)
    got = mgr.classify(str(info.value), type(info.value).__name__)
    assert (got["category"] if got else "unclassified") == row["expect_category"]


def _raise(fn):
    try:
        fn()
    except BaseException as e:  # noqa: B902  (we want whatever torch raises)
        return e
    raise AssertionError("expected an error")


# Errors torch raises in Python on this host, with the category each must get.
PYTHON_ERRORS = [
    ("device_mismatch", lambda: torch.ones(2, 3) + torch.ones(2, 3, device="meta")),
    ("dtype_mismatch", lambda: torch.mm(torch.ones(2, 3), torch.ones(3, 2, dtype=torch.float64))),
    ("dtype_mismatch", lambda: torch.nn.functional.linear(torch.ones(2, 3), torch.ones(2, 3, dtype=torch.float64))),
    ("out_of_memory", lambda: torch.empty(1 << 60, dtype=torch.uint8)),
    ("unsupported_op", lambda: torch.ones(2, device="meta").to("cpu")),
    ("unclassified", lambda: torch.ones(2, 3).view(4)),
]


@pytest.mark.parametrize("category,fn", PYTHON_ERRORS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(PYTHON_ERRORS)])
def test_real_python_errors_classify(mgr, category, fn):
    err = _raise(fn)
    got = mgr.classify(str(err), type(err).__name__)
    assert (got["category"] if got else "unclassified") == category, str(err)


def test_checkpoint_zip_error_from_torch_jit_load(mgr, tmp_path):
    bad = tmp_path / "not_a_checkpoint.pt"
    bad.write_text("not a zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit.load is deprecated, still the zip reader
        err = _raise(lambda: torch.jit.load(str(bad)))
    assert mgr.classify(str(err), type(err).__name__)["category"] == "model_loading"


# device_safe from Python: the callable raises the verbatim text itself (as the real op would
# on that device) only while the cause holds; the recovery must remove the cause.
def matmul_on(bad_device, text, exc=RuntimeError, cause=lambda ins, ctx: True):
    def fn(ins, ctx):
        if ctx["device"] == bad_device and cause(ins, ctx):
            raise exc(text)
        return ins[0] @ ins[1]
    return fn


def inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(7)
    return [torch.randn(4, 5, generator=g, dtype=dtype), torch.randn(5, 3, generator=g, dtype=dtype)]


CASES = [
    # (id, host, start, devices, dtype, raiser, expected recovery, final device, kwargs)
    ("device_mismatch", "cuda-x1", "cuda:0", ["cuda:0", "cpu"], torch.float32,
     lambda: (lambda ins, ctx: (_ for _ in ()).throw(RuntimeError(
         "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"))
         if ctx["attempt"] == 1 else ins[0] @ ins[1]),
     ["move_to_common_device"], "cuda:0", {}),
    ("out_of_memory", "cuda-x1", "cuda:0", None, torch.float32,
     lambda: matmul_on("cuda:0", "CUDA out of memory. Tried to allocate 20.00 MiB.", torch.OutOfMemoryError),
     ["empty_cache", "move_to_cpu"], "cpu", {}),
    ("mps_placeholder_storage", "cuda+mps", "mps", None, torch.float32,
     lambda: matmul_on("mps", "Placeholder storage has not been allocated on MPS device!"),
     ["empty_cache", "move_to_next_device"], "cuda:0", {}),
    ("float64_unsupported", "mps", "mps", None, torch.float64,
     lambda: matmul_on("mps", "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
                       "Please use float32 instead.", TypeError, cause=lambda ins, ctx: ins[0].dtype == torch.float64),
     ["cast_to_supported_dtype"], "mps", {}),
    ("unsupported_op", "mps", "mps", None, torch.float32,
     lambda: matmul_on("mps", "The operator 'aten::mm.out' is not currently implemented for the MPS device.",
                       NotImplementedError),
     ["move_to_cpu"], "cpu", {}),
    ("inference_tensor_version_counter", "tpu", "xla:0", None, torch.float32,
     lambda: matmul_on("xla:0", "Cannot set version_counter for inference tensor",
                       cause=lambda ins, ctx: torch.is_inference_mode_enabled()),
     ["use_no_grad"], "xla:0", {"inference": "inference_mode"}),
    # A launch the runtime refused leaves the CUDA context usable (sticky errors: see below).
    ("cuda_runtime", "cuda-x1", "cuda:0", None, torch.float32,
     lambda: matmul_on("cuda:0", "CUDA error: invalid configuration argument"),
     ["empty_cache", "move_to_cpu"], "cpu", {}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_device_safe_recovers_python_errors(crossdev_module, case):
    category, host, start, devices, dtype, make_fn, recovery, final, kwargs = case
    m = crossdev_module.manager.DeviceManager(host)
    ins = inputs(dtype)
    expected = ins[0].double() @ ins[1].double()
    r = m.device_safe(make_fn(), ins, devices=devices or [start, start], device=start, **kwargs)
    rep = r["report"]
    assert rep["outcome"] == "recovered", rep["summary"]
    assert rep["attempts"][0]["category"] == category
    assert [a for att in rep["attempts"] for a in att["recovery"]] == recovery
    assert rep["final_device"] == final
    out = r["outputs"][0]
    # Never silent: a result produced after a cast says so in the report.
    if out.dtype != dtype:
        assert rep["casts"], rep["summary"]
    torch.testing.assert_close(out.double(), expected, rtol=1.3e-6, atol=1e-5)


# CUDA: these errors leave "the process in an inconsistent state and any further CUDA work will
# return the same error" (cudaError docs), empty_cache and the copy to the cpu included. torch >= 2.8
# raises them as torch.AcceleratorError, a RuntimeError.
STICKY = [
    ("assert", RuntimeError, "CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously "
     "reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
     "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."),
    ("illegal-address", getattr(torch, "AcceleratorError", RuntimeError),
     "CUDA error: an illegal memory access was encountered\nSearch for `cudaErrorIllegalAddress' in "
     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information."),
]


@pytest.mark.parametrize("exc,text", [s[1:] for s in STICKY], ids=[s[0] for s in STICKY])
def test_sticky_cuda_error_is_not_retried_and_says_restart(crossdev_module, exc, text):
    m = crossdev_module.manager.DeviceManager("cuda-x2")
    original = exc(text)
    calls = []

    def fn(ins, ctx):
        calls.append(ctx["device"])
        raise original

    with pytest.raises(exc) as info:
        m.device_safe(fn, inputs(), devices=["cuda:1", "cuda:1"], device="cuda:1", max_attempts=5)
    assert info.value is original and str(info.value) == text  # rethrown unchanged
    assert calls == ["cuda:1"]  # no retry: not on cuda:1, cuda:0 or the cpu
    rep = crossdev_module._last_report
    assert rep["outcome"] == "needs_new_process", rep["summary"]
    assert rep["attempts"][0]["category"] == "cuda_sticky_error"
    assert rep["attempts"][0]["recovery"] == []
    assert rep["cache_flushes"] == 0 and rep["chain_steps"] == [] and rep["moves"] == []
    assert rep["final_device"] == "cuda:1"
    advice = rep["attempts"][0]["recovery_detail"]
    for needle in ("Restart the process", "CUDA_LAUNCH_BLOCKING=1", "TORCH_USE_CUDA_DSA"):
        assert needle in advice, advice
    # The traceback says so too: a PEP 678 note on the same exception object.
    assert any("Restart the process" in n for n in getattr(info.value, "__notes__", [])), info.value


def test_sticky_and_recoverable_cuda_errors_classify_apart(mgr):
    sticky = mgr.classify("CUDA error: device-side assert triggered", "AcceleratorError")
    assert sticky["category"] == "cuda_sticky_error" and sticky["recovery"] == [["restart_process"]]
    recoverable = mgr.classify("CUDA error: too many resources requested for launch", "AcceleratorError")
    assert recoverable["category"] == "cuda_runtime" and recoverable["recovery"] == [["empty_cache", "move_to_cpu"]]
    assert mgr.classify("CUDA error: out of memory", "AcceleratorError")["category"] == "out_of_memory"


def test_dtype_mismatch_real_error_recovered(crossdev_module):
    m = crossdev_module.manager.DeviceManager("cpu-only")
    a, b = inputs()[0], inputs(torch.float64)[1]
    r = m.device_safe(lambda ins, ctx: torch.mm(ins[0], ins[1]), [a, b])
    assert r["report"]["attempts"][0]["category"] == "dtype_mismatch"
    assert r["report"]["attempts"][0]["error_message"].startswith("expected m1 and m2 to have the same dtype")
    torch.testing.assert_close(r["outputs"][0], a.double() @ b)


def test_model_loading_falls_back_to_cpu(crossdev_module, tmp_path):
    m = crossdev_module.manager.DeviceManager("cuda-x1")
    path = tmp_path / "ckpt.pt"
    w = torch.randn(3, 4)
    m.save_checkpoint(str(path), {"w": (w, "cuda:0")})
    text = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
            "storages to the CPU.")

    def load(ins, ctx):
        if ctx["device"].startswith("cuda"):
            raise RuntimeError(text)
        return m.load_checkpoint(str(path), ctx["device"])["w"]["tensor"]

    r = m.device_safe(load, [], device="cuda:0")
    assert r["report"]["final_device"] == "cpu"
    assert [a for att in r["report"]["attempts"] for a in att["recovery"]] == ["move_to_cpu"]
    assert torch.equal(r["outputs"][0], w)


def test_unclassified_python_error_is_the_same_object(crossdev_module):
    m = crossdev_module.manager.DeviceManager("cpu-only")
    original = KeyError("not a device problem")

    def fn(ins, ctx):
        raise original

    with pytest.raises(KeyError) as info:
        m.device_safe(fn, [torch.ones(1)])
    assert info.value is original
    report = crossdev_module._last_report
    assert report["outcome"] == "rethrown"
    assert len(report["attempts"]) == 1 and report["attempts"][0]["category"] is None


def test_exhausted_error_is_rethrown_unchanged(crossdev_module):
    m = crossdev_module.manager.DeviceManager("cpu-only")
    original = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB.")
    calls = []

    def fn(ins, ctx):
        calls.append(ctx["device"])
        raise original

    with pytest.raises(torch.OutOfMemoryError) as info:
        m.device_safe(fn, [torch.ones(1)], max_attempts=5)
    assert info.value is original
    # empty_cache on cpu, retry, then move_to_cpu is impossible from the cpu: 2 calls, not 5.
    assert calls == ["cpu", "cpu"]
    assert crossdev_module._last_report["outcome"] == "recovery_failed"


def test_wrong_result_is_rejected_not_returned(crossdev_module):
    m = crossdev_module.manager.DeviceManager("mps")
    ins = inputs()
    expected = ins[0] @ ins[1]

    def fn(ins, ctx):
        if ctx["device"] == "mps":
            raise RuntimeError("Placeholder storage has not been allocated on MPS device!")
        return ins[0] @ ins[1] + 1.0  # the "recovered" computation is wrong

    def validate(outs):
        return None if torch.allclose(outs[0], expected) else "differs from the reference"

    with pytest.raises(RuntimeError, match="result rejected after 2 attempt"):
        m.device_safe(fn, ins, devices=["mps", "mps"], validate=validate)
    assert crossdev_module._last_report["outcome"] == "rejected"


def test_injected_faults_fire_only_while_their_condition_holds(crossdev_module):
    m = crossdev_module.manager.DeviceManager("mps")
    text = "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 instead."
    fault = [{"device": "mps", "when": ["float64_input"], "type": "TypeError", "text": text}]
    ok = m.device_safe(lambda ins, ctx: ins[0] * 2, [torch.ones(2)], devices=["mps"], faults=fault)
    assert ok["faults_fired"] == 0 and ok["report"]["outcome"] == "ok"
    cast = m.device_safe(lambda ins, ctx: ins[0] * 2, [torch.ones(2, dtype=torch.float64)], devices=["mps"], faults=fault)
    assert cast["faults_fired"] == 1
    assert cast["outputs"][0].dtype == torch.float32
    assert cast["report"]["casts"][0]["from"] == "float64" and "float64" in cast["report"]["casts"][0]["reason"]
    with pytest.raises(ValueError, match="unknown fault condition"):
        m.device_safe(lambda ins, ctx: ins[0], [torch.ones(1)], faults=[{"when": ["full_moon"], "text": "x"}])
