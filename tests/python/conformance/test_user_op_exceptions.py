"""A Python exception raised by a user's op inside a row is that case's `error`, with the
exception's type and message, through `crossdev.run_matrix` and through the pytest plugin
(issue 22, bad input). Before, the Python error could stay pending on the thread: the plugin
reported `SystemError: <built-in method run_row ...> returned a result with an exception set`,
or a case the previous case's exception.

The ops are `torch.library.custom_op`s named as candidates of ops rows (the way
examples/downstream/matrices/python/ops.yaml names mylib_py::gelu_tanh): one raises ValueError, one
has no autograd formula and is checked with gradients (PyTorch's RuntimeError, raised in
backward). Every case of a row calls the op again, so a pending error would spoil the next one.
Each check runs in a subprocess: the ops are registered in that process only."""
import json
import subprocess
import sys
import textwrap

import pytest

from plugin_runner import pytest_env, run_pytest

USER_OPS = textwrap.dedent("""\
    import math

    import torch

    MESSAGE = "user op refused the input"


    @torch.library.custom_op("crossdev_user_ex::raises", mutates_args=())
    def raises(x: torch.Tensor) -> torch.Tensor:
        raise ValueError(MESSAGE)


    def gelu_tanh(x):
        v = x.double()
        return (0.5 * v * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))).to(x.dtype)


    @torch.library.custom_op("crossdev_user_ex::no_autograd", mutates_args=())
    def no_autograd(x: torch.Tensor) -> torch.Tensor:
        return gelu_tanh(x)


    @torch.library.custom_op("crossdev_user_ex::even_sizes", mutates_args=())
    def even_sizes(x: torch.Tensor) -> torch.Tensor:
        if x.numel() % 2:
            raise KeyError("odd numel")
        return gelu_tanh(x)
    """)

MATRIX = textwrap.dedent("""\
    suite: ops
    cases:
      - id: user.even_sizes
        source: "tests/python/conformance/test_user_op_exceptions.py"
        intent: "first, before autograd has run: forward and backward errors in one row, each its own"
        op: gelu_tanh
        candidate: "crossdev_user_ex::even_sizes"
        devices: [cpu]
        dtypes: [float32]
        shape_sets: [size1, basic]

      - id: user.raises
        source: "tests/python/conformance/test_user_op_exceptions.py"
        intent: "a Python op raising ValueError: each case is an error with the op's own message"
        op: gelu_tanh
        candidate: "crossdev_user_ex::raises"
        devices: [cpu]
        dtypes: [float32, float64]
        shape_sets: [basic, odd_tail]

      - id: user.no_autograd
        source: "tests/python/conformance/test_user_op_exceptions.py"
        intent: "no autograd formula, checked with gradients: PyTorch's RuntimeError is the case's error"
        op: gelu_tanh
        candidate: "crossdev_user_ex::no_autograd"
        devices: [cpu]
        dtypes: [float32]
        shape_sets: [basic, odd_tail]

      - id: user.no_autograd.forward
        source: "tests/python/conformance/test_user_op_exceptions.py"
        intent: "the same op checked forward only passes"
        op: gelu_tanh
        candidate: "crossdev_user_ex::no_autograd"
        devices: [cpu]
        dtypes: [float32]
        shape_sets: [basic]
        checks: [forward]

      - id: user.after
        source: "tests/python/conformance/test_user_op_exceptions.py"
        intent: "rows after the failing ones run clean: no Python error is left pending"
        op: gelu_tanh
        devices: [cpu]
        dtypes: [float32]
        shape_sets: [basic]
        impls: [fused]
    """)

RAISES = "ValueError: user op refused the input"
NO_AUTOGRAD = "RuntimeError: Trying to backward through crossdev_user_ex.no_autograd.default but no autograd " \
              "formula was registered"


@pytest.fixture()
def user_project(tmp_path):
    (tmp_path / "userops.py").write_text(USER_OPS)
    (tmp_path / "matrices").mkdir()
    (tmp_path / "matrices" / "user_ops.yaml").write_text(MATRIX)
    return tmp_path


def check_cases(cases):
    """cases: {id: (status, message)} of the whole matrix."""
    raising = {i: c for i, c in cases.items() if i.startswith("user.raises/")}
    assert len(raising) == 4, cases  # two dtypes x two shape sets, each calling the op again
    for case_id, (status, message) in raising.items():
        assert status == "error" and message == RAISES, (case_id, status, message)  # one line, no traceback
    backward = {i: c for i, c in cases.items() if i.startswith("user.no_autograd/")}
    assert len(backward) == 2, cases
    for case_id, (status, message) in backward.items():
        assert status == "error" and message.startswith(NO_AUTOGRAD), (case_id, status, message)
    # The sequence that left the Python error pending before (run_row: SystemError): a forward
    # KeyError, then a backward RuntimeError.
    mixed = {i.split("/")[3]: c for i, c in cases.items() if i.startswith("user.even_sizes/")}
    assert mixed["size1"] == ("error", "KeyError: 'odd numel'"), mixed
    assert mixed["basic"][0] == "error" and mixed["basic"][1].startswith(NO_AUTOGRAD.replace("no_autograd",
                                                                                           "even_sizes")), mixed
    assert [c[0] for i, c in cases.items() if i.startswith("user.no_autograd.forward/")] == ["pass"], cases
    assert [c[0] for i, c in cases.items() if i.startswith("user.after/")] == ["pass"], cases
    assert not any("SystemError" in message for _, message in cases.values()), cases


def test_run_matrix_reports_the_exception_of_a_users_python_op(user_project):
    code = textwrap.dedent(f"""\
        import json, sys
        sys.path.insert(0, {str(user_project)!r})
        import crossdev
        import userops  # registers the ops
        results = crossdev.run_matrix({str(user_project / "matrices" / "user_ops.yaml")!r})
        print(json.dumps(results))
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=pytest_env(),
                          cwd=user_project, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    check_cases({r["id"]: (r["status"], r["message"]) for r in results})


def test_the_plugin_reports_the_exception_of_a_users_python_op(user_project):
    bundle = user_project / "bundle.json"
    r = run_pytest("matrices/user_ops.yaml", "-q", "--crossdev-import", "userops", "--crossdev-bundle", bundle,
                   cwd=user_project, extra_path=[user_project])
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "SystemError" not in out and "returned a result with an exception set" not in out, out
    assert "8 failed, 2 passed" in r.stdout, r.stdout
    assert f"error: {RAISES}" in r.stdout and f"error: {NO_AUTOGRAD}" in r.stdout, r.stdout
    check_cases({c["id"]: (c["status"], c["message"]) for c in json.loads(bundle.read_text())["cases"]})
