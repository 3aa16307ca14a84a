"""crossdev::<op>_backward on the CPU: the fused backward kernel runs when the call passes the
forward's fused predicates and grad_out looks like the output (shape, dtype, device); otherwise
the autograd-derived backward runs, logged at debug level with the reason, as the forward's
native kernel does. Gradient values are checked elsewhere (crossdev_ops_tests FusedBackward.*,
EveryCapability.*, test_cpu_capability.py); this is the routing. The op list is the registered one."""
import os
import subprocess
import sys
import textwrap

import torch

import crossdev
from op_samples import op_arguments

OPS = crossdev.ops.op_names()

CHILD = textwrap.dedent("""
    import sys, torch
    import crossdev
    sys.path.insert(0, sys.argv[1])
    from op_samples import op_arguments
    for op in crossdev.ops.op_names():
        args = op_arguments(op, "odd_tail", torch.float32, "cpu")
        out = getattr(torch.ops.crossdev, op)(*args)
        backward = getattr(torch.ops.crossdev, op + "_backward")
        print(f"== {op} fused", file=sys.stderr, flush=True)
        backward(torch.ones_like(out), *args)
        print(f"== {op} float64 grad_out", file=sys.stderr, flush=True)
        backward(torch.ones_like(out, dtype=torch.float64), *args)
""")


def test_derived_backward_runs_only_when_the_fused_one_may_not(build_dir):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/python: op_samples.py
    path = os.pathsep.join(p for p in (str(build_dir / "python"), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, CROSSDEV_LOG_LEVEL="debug", PYTHONPATH=path)
    proc = subprocess.run([sys.executable, "-c", CHILD, here], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sections = {}
    current = None
    for line in proc.stderr.splitlines():
        if line.startswith("== "):
            current = line[3:]
            sections[current] = []
        elif current is not None and "_backward: ran derived backward" in line:
            sections[current].append(line)
    for op in OPS:
        assert sections[f"{op} fused"] == [], sections[f"{op} fused"]
        derived = sections[f"{op} float64 grad_out"]
        assert len(derived) == 1 and "grad_out has dtype Double but the output has Float" in derived[0], derived


def test_rejected_call_gets_the_derived_gradients():
    for op in OPS:
        args = op_arguments(op, "odd_tail", torch.float32, "cpu")
        out = getattr(torch.ops.crossdev, op)(*args)
        backward = getattr(torch.ops.crossdev, op + "_backward")
        g = torch.linspace(-1, 1, out.numel()).reshape(out.shape)
        torch.manual_seed(0)  # a random op's backward draws the forward's stream: the same one for both
        fused = backward(g, *args)
        torch.manual_seed(0)
        derived = backward(g.double(), *args)  # exact in float64: the same grad_out, the other kernel
        for a, b in zip(fused, derived):
            torch.testing.assert_close(a, b, msg=lambda m: f"{op}: {m}")


def test_a_misshapen_grad_out_is_refused_with_both_shapes():
    x = torch.randn(4, 8)
    w = torch.rand(8) + 0.5
    try:
        torch.ops.crossdev.rms_norm_backward(torch.randn(2, 8), x, w, 1e-6)
    except RuntimeError as e:
        assert "[2, 8]" in str(e) and "[4, 8]" in str(e), str(e)
    else:
        raise AssertionError("a [2, 8] grad_out for a [4, 8] output was accepted")
