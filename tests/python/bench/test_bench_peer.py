"""crossdev.bench: the inputs and traffic model the Python bench driver (bench/python/peer_bench.py) uses."""
import pytest


@pytest.fixture(scope="module")
def bench_module(crossdev_module):
    try:
        import crossdev.bench
    except ImportError as e:
        assert "built without the benchmarks" in str(e), e
        pytest.skip("crossdev was built without crossdev.bench (CROSSDEV_BUILD_BENCH=OFF)")
    return crossdev.bench


def test_the_core_extension_does_not_carry_the_bench(crossdev_module, bench_module):
    """crossdev.bench is its own module, crossdev._bench (python/CMakeLists.txt): the core extension binds
    nothing of bench/, so a build without the benchmarks has the same core."""
    import crossdev._crossdev as core
    assert not hasattr(core, "bench")
    assert bench_module.make_inputs.__module__.endswith("_bench"), bench_module.make_inputs.__module__


def test_make_inputs_is_deterministic_and_sized(bench_module):
    import torch
    a = bench_module.make_inputs("modulate", 1 << 20, "float32", "cpu", 0)
    b = bench_module.make_inputs("modulate", 1 << 20, "float32", "cpu", 0)
    c = bench_module.make_inputs("modulate", 1 << 20, "float32", "cpu", 1)
    assert sorted(a["tensors"]) == ["scale", "shift", "x"]
    assert a["tensors"]["x"].shape == (4, 256, 1024) and a["tensors"]["x"].dtype == torch.float32
    assert all(torch.equal(a["tensors"][k], b["tensors"][k]) for k in a["tensors"])
    assert not torch.equal(a["tensors"]["x"], c["tensors"]["x"])
    half = bench_module.make_inputs("modulate", 1 << 20, "bfloat16")
    assert half["tensors"]["x"].dtype == torch.bfloat16
    # bf16 values are the float64 values rounded: the same generator, then the cast.
    assert torch.equal(half["tensors"]["x"], a["tensors"]["x"].to(torch.bfloat16))


@pytest.mark.parametrize("op", ["bias_dropout_add_scale", "rms_norm", "layer_norm_modulate", "gelu_tanh", "swiglu",
                                "rotary", "scaled_masked_softmax"])
def test_every_layout_is_sized_by_its_granule(bench_module, op):
    (granule,) = [g for name, g, _ in bench_module.layouts() if name == op]
    for multiple in (1, 4):
        call = bench_module.make_inputs(op, multiple * granule, "float32")
        main = max(call["tensors"].values(), key=lambda t: t.numel())
        assert main.numel() == multiple * granule


def test_bad_size_names_the_granule(bench_module):
    with pytest.raises(ValueError, match="multiple of 262144"):
        bench_module.make_inputs("scaled_masked_softmax", 1024, "float32")
    with pytest.raises(ValueError, match="expected one of"):
        bench_module.make_inputs("modulate", 1024, "float8")


def test_traffic_model_counts_distinct_bytes(bench_module):
    import torch
    call = bench_module.make_inputs("modulate", 1 << 20, "float32")
    t = call["tensors"]
    out = torch.empty_like(t["x"])
    nbytes = lambda x: x.numel() * x.element_size()  # noqa: E731
    fwd, elements = bench_module.traffic("modulate", t, out, "fwd")
    assert elements == out.numel()
    assert fwd == sum(nbytes(x) for x in t.values()) + nbytes(out)
    fwd_bwd, _ = bench_module.traffic("modulate", t, out, "fwd_bwd")
    # fwd_bwd: the forward, then grad_out (the size of out) and the inputs again, plus one gradient per input.
    assert fwd_bwd == 2 * fwd + sum(nbytes(t[n]) for n in bench_module.grad_inputs("modulate"))
    # A broadcast view costs the storage it spans, not its logical size.
    expanded = dict(t, shift=t["shift"][:1].expand(4, 1024))
    fwd_broadcast, _ = bench_module.traffic("modulate", expanded, out, "fwd")
    assert fwd_broadcast == fwd - 3 * 1024 * 4
