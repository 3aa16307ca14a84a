"""Kernel-only timings of the fused CPU kernels (a developer check, not a test, not the benchmark
suite: bench/ and `make report` are that). One process, torch.utils.benchmark, fp32, 8M
elements (B=8, T=1024, D=1024), every output preallocated: the `.out` overloads, so the
allocator and page faults are out of the figure. ATen's own kernels for the same math are timed
beside them (gelu tanh, softmax), and an ATen triad for the memory line.

    python3 bench/python/time_kernels.py --build-dir build [--min-run-time 1.0] [--json out.json]

CROSSDEV_CPU_CAPABILITY=default|avx2|avx512 picks the fused kernels' instruction set (the choice
is printed). Figures are medians of blocked_autorange; on a shared machine they move.
"""
import argparse
import json
import pathlib
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--min-run-time", type=float, default=1.0)
    parser.add_argument("--backward", action="store_true", help="also time crossdev::<op>_backward (allocating)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    build = pathlib.Path(args.build_dir).resolve()
    import torch
    import torch.utils.benchmark as benchmark

    # The operator library alone (an older build's Python module may not import against newer
    # libraries; the kernels only need torch.ops.crossdev).
    torch.ops.load_library(str(build / "lib" / "libcrossdev_ops.so"))
    try:
        sys.path.insert(0, str(build / "python"))
        import crossdev
        info = crossdev.ops.cpu_capability_info()
    except (ImportError, AttributeError):
        info = {"chosen": "n/a", "source": "no runtime dispatch in this build"}

    torch.manual_seed(0)
    B, T, D = 8, 1024, 1024
    H, Dh = 8, 128
    f32 = torch.float32
    x = torch.randn(B, T, D)
    rows = lambda *s: torch.randn(*s)  # noqa: E731
    inputs = {
        "modulate": dict(x=x, shift=rows(B, D), scale=rows(B, D) * 0.1),
        "bias_dropout_add_scale": dict(x=x, bias=rows(D), scale=rows(D), residual=torch.randn(B, T, D),
                                       scale_value=1.0, p=0.1, training=True, seed=7),
        "rms_norm": dict(x=x, weight=rows(D), eps=1e-6),
        "layer_norm_modulate": dict(x=x, shift=rows(B, D), scale=rows(B, D) * 0.1, eps=1e-6),
        "swiglu": dict(gate=x, up=torch.randn(B, T, D)),
        "rotary": dict(x=torch.randn(B, T, H, Dh), cos=rows(T, Dh), sin=rows(T, Dh)),
        "gelu_tanh": dict(x=x),
        "scaled_masked_softmax": dict(scores=torch.randn(B, H, 128, 1024), mask=torch.rand(B, 1, 128, 1024) < 0.3,
                                      scale=0.125),
    }
    inputs["scaled_masked_softmax[no mask]"] = dict(scores=inputs["scaled_masked_softmax"]["scores"], mask=None,
                                                    scale=0.125)

    def call_args(op, kwargs):
        schema = getattr(torch.ops.crossdev, op).default._schema
        return [kwargs.get(a.name, a.default_value) for a in schema.arguments]

    def timed(label, stmt, env):
        m = benchmark.Timer(stmt=stmt, globals=env, num_threads=torch.get_num_threads(), label=label).blocked_autorange(
            min_run_time=args.min_run_time)
        return {"name": label, "median_ms": m.median * 1e3, "iqr_ms": m.iqr * 1e3, "runs": len(m.times)}

    results = []
    for name, kwargs in inputs.items():
        op = name.split("[")[0]
        a = call_args(op, kwargs)
        out = torch.empty_like(a[0])
        fn = getattr(torch.ops.crossdev, op).out
        results.append(timed(f"crossdev::{name}.out", "fn(*a, out=out)", dict(fn=fn, a=a, out=out)))
        if args.backward:
            g = torch.randn_like(out)
            bwd = getattr(torch.ops.crossdev, f"{op}_backward")
            results.append(timed(f"crossdev::{name}_backward", "bwd(g, *a)", dict(bwd=bwd, g=g, a=a)))

    out = torch.empty_like(x)
    results.append(timed("aten::gelu.out(approximate='tanh')", "torch.ops.aten.gelu.out(x, approximate='tanh', out=out)",
                         dict(torch=torch, x=x, out=out)))
    scores = inputs["scaled_masked_softmax"]["scores"]
    sout = torch.empty_like(scores)
    results.append(timed("aten::_softmax.out(dim=-1)", "torch.ops.aten._softmax.out(s, -1, False, out=o)",
                         dict(torch=torch, s=scores, o=sout)))
    y = torch.randn_like(x)
    results.append(timed("aten::add.out (triad x + 2y)", "torch.add(x, y, alpha=2.0, out=out)",
                         dict(torch=torch, x=x, y=y, out=out)))

    header = (f"torch {torch.__version__}, {torch.get_num_threads()} threads, ATen {torch.backends.cpu.get_cpu_capability()}, "
              f"crossdev fused CPU kernels: {info['chosen']} ({info['source']}), {build}")
    print(header)
    print(f"{'kernel':48s} {'median ms':>10s} {'IQR ms':>8s} {'runs':>5s}")
    for r in results:
        print(f"{r['name']:48s} {r['median_ms']:10.2f} {r['iqr_ms']:8.2f} {r['runs']:5d}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"header": header, "rows": results}, indent=1))


if __name__ == "__main__":
    main()
