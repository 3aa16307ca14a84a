"""Runtime CPU dispatch (impl/ops/cpu/capability.h): CROSSDEV_CPU_CAPABILITY forces the instruction
set of the fused CPU kernels, as ATEN_CPU_CAPABILITY does for ATen's. For every capability this
build and CPU can run, a fresh process (the choice is made once per process) runs every op's fused
forward and backward on the portable inputs of every shape set but `large`; each must match the
fallback within assert_close's default tolerance, and the capabilities must match each other.
The op list is the registered one (crossdev.ops.op_names())."""
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import crossdev

DTYPES = ["float32", "float64", "bfloat16"]

# Runs in a child process: fused and fallback outputs and gradients, saved with torch.save.
CHILD = textwrap.dedent("""
    import json, sys, torch
    import crossdev
    results = {}
    for op in crossdev.ops.op_names():
        for shape_set in crossdev.ops.shape_sets(op):
            if shape_set == "large":
                continue
            for dtype_name in %(dtypes)r:
                dtype = getattr(torch, dtype_name)
                made = crossdev.ops.make_inputs(op, shape_set, dtype, "cpu", 3)
                for impl in ("fused", "fallback"):
                    tensors = {}
                    leaves = []
                    for name, t in made["tensors"].items():
                        if name in crossdev.ops.grad_inputs(op) and t is not None:
                            t = t.detach().clone().requires_grad_(True)
                            leaves.append((name, t))
                        tensors[name] = t
                    out = crossdev.ops.run(op, impl, tensors, made["scalars"], made["training"], made["seed"])
                    weight = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape).to(dtype)
                    grads = torch.autograd.grad(out, [t for _, t in leaves], weight, allow_unused=True)
                    key = f"{op}/{shape_set}/{dtype_name}/{impl}"
                    results[key] = {"out": out.detach(), **{f"grad.{n}": g for (n, _), g in zip(leaves, grads)}}
    torch.save(results, sys.argv[1])
    print(json.dumps(crossdev.ops.cpu_capability_info()))
""" % {"dtypes": DTYPES})


def child_env(build_dir, capability):
    """The environment of a child process that imports the built crossdev module."""
    path = os.pathsep.join(p for p in (str(build_dir / "python"), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, CROSSDEV_CPU_CAPABILITY=capability, PYTHONPATH=path)
    env.pop("ATEN_CPU_CAPABILITY", None)
    return env


def run_child(tmp_path, build_dir, capability):
    path = tmp_path / f"{capability}.pt"
    env = child_env(build_dir, capability)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=os.getcwd())
    assert proc.returncode == 0, proc.stderr[-4000:]
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return info, torch.load(path)


def test_capability_info_names_the_choice():
    info = crossdev.ops.cpu_capability_info()
    assert info["chosen"] == crossdev.ops.cpu_capability()
    assert info["available"][0] == "default"
    assert info["chosen"] in info["available"]
    assert set(info) == {"chosen", "hardware", "built", "source", "available"}


def test_invalid_value_is_ignored_with_a_warning(build_dir):
    env = child_env(build_dir, "avx9000")
    code = "import crossdev; print(crossdev.ops.cpu_capability_info()['source'])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ignoring invalid value for CROSSDEV_CPU_CAPABILITY: 'avx9000'" in proc.stderr
    assert proc.stdout.strip().startswith("ATen's choice")


def test_every_capability_matches_the_fallback_and_each_other(tmp_path, build_dir):
    available = crossdev.ops.cpu_capability_info()["available"]
    by_capability = {}
    for capability in available:
        info, results = run_child(tmp_path, build_dir, capability)
        assert info["chosen"] == capability, info
        assert info["source"] == f"CROSSDEV_CPU_CAPABILITY={capability}"
        by_capability[capability] = results
    failures = []
    reference = by_capability["default"]
    for capability, results in by_capability.items():
        for key, fused in results.items():
            if not key.endswith("/fused"):
                continue
            fallback = results[key[: -len("fused")] + "fallback"]
            for name, value in fused.items():
                try:
                    torch.testing.assert_close(value, fallback[name], equal_nan=True)
                except AssertionError as e:
                    failures.append(f"{capability} {key} {name} vs fallback: {str(e).splitlines()[0]}")
                # Two kernels each within tolerance of the fallback: within twice of each other.
                other = reference[key][name]
                tol = torch.testing._comparison.default_tolerances(value)
                try:
                    torch.testing.assert_close(value, other, rtol=2 * tol[0], atol=2 * tol[1], equal_nan=True)
                except AssertionError as e:
                    failures.append(f"{capability} vs default {key} {name}: {str(e).splitlines()[0]}")
    assert not failures, "\n".join(failures[:20])
    assert len(by_capability) == len(available)
