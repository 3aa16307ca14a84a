"""Device-picker checks (--crossdev-picker MODULE:CALLABLE --crossdev-picker-preset NAME): one item
per simulated host profile, the picker's answer against the preset's decision. Each host's picker
runs in a fresh process (crossdev.picker_check); a picker that raises, hangs or dies fails its host
with the reason, and the pytest process itself is never patched. The real accelerate and Lightning
pickers: test_pytest_plugin_real_pickers.py."""
import textwrap

import pytest

from plugin_runner import PICKERS, run_pytest

PRESET = "cuda-first"


def picker_run(tmp_path, spec, *args, preset=PRESET, modules=None):
    for name, text in (modules or {}).items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    empty = tmp_path / "nothing_else"
    empty.mkdir(exist_ok=True)
    return run_pytest(empty, "-v", "--crossdev-picker", spec, "--crossdev-picker-preset", preset, *args,
                      extra_path=[PICKERS, tmp_path], cwd=tmp_path)


def outcomes(result):
    """{host: PASSED|FAILED} from the -v lines 'crossdev-picker::<preset>/<host> PASSED'."""
    out = {}
    for line in result.stdout.splitlines():
        if line.startswith("crossdev-picker::") and (" PASSED" in line or " FAILED" in line):
            node, verdict = line.split()[:2]
            out[node.split("/", 1)[1]] = verdict
    return out


@pytest.fixture(scope="module")
def hosts(crossdev_module):
    return crossdev_module.harness.named_hosts()


def decision(crossdev_module, host, preset=PRESET):
    return crossdev_module.resolve([None], host=host, policy=preset)[0]["resolved_type"]


def test_a_correct_picker_passes_on_every_host_each_in_a_fresh_process(tmp_path, hosts):
    """cuda-first written out by hand. It caches its first answer (as accelerate's PartialState and
    lru_cache'd availability checks do) and still sees each host: every host's picker runs in a
    process of its own."""
    r = picker_run(tmp_path, "good:pick", modules={"good": f"""
        import functools, importlib.util, os, torch
        @functools.lru_cache
        def pick():
            with open(os.path.join({str(tmp_path)!r}, "pids.txt"), "a") as f:
                f.write(f"{{os.getpid()}}\\n")
            if torch.cuda.is_available(): return "cuda"
            if torch.xpu.is_available(): return "xpu"
            if torch.backends.mps.is_available(): return "mps"
            if importlib.util.find_spec("torch_xla") is not None: return "tpu"
            return "cpu"
        """})
    assert r.returncode == 0, r.stdout + r.stderr
    assert outcomes(r) == {h: "PASSED" for h in hosts}
    pids = (tmp_path / "pids.txt").read_text().split()
    assert len(pids) == len(set(pids)) == len(hosts)


def test_seed_004_get_device_against_cuda_first(tmp_path, hosts, crossdev_module):
    """Seed 004's get_device(), as written in the seed, knows CUDA, MPS and CPU: it can agree with
    cuda-first only where the preset's choice is one of those."""
    r = picker_run(tmp_path, "seed004_get_device:get_device")
    got = outcomes(r)
    print("seed 004 get_device() vs cuda-first:", got)
    assert set(got) == set(hosts)
    want = {h: ("PASSED" if decision(crossdev_module, h) in ("cuda", "mps", "cpu") else "FAILED") for h in hosts}
    assert got == want
    assert r.returncode == (1 if "FAILED" in want.values() else 0)


# A picker that misbehaves in each way, by host; the hosts not named answer "cpu" (wrong where the
# preset picks an accelerator).
MISBEHAVES = """
    import os, sys, time, torch
    if torch.xpu.is_available():
        raise ImportError("needs no XPU")           # xpu, xpu+cuda, all: the import fails
    def pick():
        if torch.cuda.device_count() == 2:
            time.sleep(600)                         # cuda-x2: hangs
        if torch.backends.mps.is_available():
            print("dying", file=sys.stderr)
            os._exit(3)                             # mps, cuda+mps: the process dies
        if torch.cuda.is_available():
            raise RuntimeError("picker blew up")    # cuda-x1: raises
        return "cpu"                                # cpu-only: right; tpu: wrong
    """

# A plugin loaded before crossdev's: notes the probes first, compares them at the end.
RESTORE_CHECK = """
    import importlib.metadata, importlib.util, platform, sys, torch
    def probes():
        return [torch.cuda.is_available, torch.cuda.device_count, torch.backends.mps.is_available,
                torch.backends.mps.is_built, torch.xpu.is_available, torch.xpu.device_count,
                importlib.util.find_spec, platform.processor,
                vars(importlib.metadata.Distribution)["from_name"], list(sys.meta_path)]
    ORIGINAL = probes()
    def pytest_sessionfinish(session):
        now = probes()
        same = all(a is b for a, b in zip(ORIGINAL[:-1], now[:-1])) and ORIGINAL[-1] == now[-1]
        open("restored.txt", "w").write("PROBES RESTORED" if same else "PROBES LEFT PATCHED")
    """


def test_a_picker_that_raises_hangs_dies_or_is_wrong_fails_that_host_with_the_reason(tmp_path, hosts):
    r = picker_run(tmp_path, "misbehaves:pick", "--crossdev-picker-timeout", "5", "-p", "restore_check",
                   modules={"misbehaves": MISBEHAVES, "restore_check": RESTORE_CHECK})
    assert r.returncode == 1, r.stdout[-3000:]
    assert outcomes(r) == {h: ("PASSED" if h == "cpu-only" else "FAILED") for h in hosts}, r.stdout[-3000:]
    reason = {"cuda-x1": "misbehaves:pick() raised RuntimeError: picker blew up (at ",
              "cuda-x2": "misbehaves:pick(): no answer within 5 s; the process was killed",
              "mps": "misbehaves:pick(): the picker's process exited with status 3 before answering",
              "cuda+mps": "misbehaves:pick(): the picker's process exited with status 3 before answering",
              "xpu": "importing misbehaves raised ImportError: needs no XPU (at ",
              "xpu+cuda": "importing misbehaves raised ImportError: needs no XPU (at ",
              "all": "importing misbehaves raised ImportError: needs no XPU (at ",
              "tpu": "preset cuda-first picks xla:0"}
    for host, text in reason.items():
        assert any(line.startswith(f"on host '{host}' (") and text in line for line in r.stdout.splitlines()), \
            (host, text, r.stdout[-6000:])
    assert "returned 'cpu'" in r.stdout and "dying" in r.stdout  # the dead process's stderr is shown
    assert "(the picker asked: torch.xpu.is_available" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr  # the picker's failure, never the harness's traceback
    # The pytest process itself was never patched: the pickers ran elsewhere.
    assert (tmp_path / "restored.txt").read_text() == "PROBES RESTORED", r.stdout[-3000:]


def test_patches_apply_inside_and_are_undone_after_an_exception(crossdev_module):
    import importlib.metadata
    import importlib.util
    import platform
    import sys
    import torch
    from crossdev.picker_check import simulated_torch_probes

    def probes():
        return (torch.cuda.is_available, torch.backends.mps.is_available, torch.backends.mps.is_built,
                torch.xpu.is_available, importlib.util.find_spec, platform.processor,
                vars(importlib.metadata.Distribution)["from_name"])
    before, path, meta_path = probes(), list(sys.path), list(sys.meta_path)
    with pytest.raises(KeyError):
        with simulated_torch_probes({"cuda": 2, "mps": 1, "xla": 1}) as asked:
            assert torch.cuda.is_available() and torch.cuda.device_count() == 2
            assert torch.backends.mps.is_available() and torch.backends.mps.is_built()
            assert platform.processor() == "arm" and not torch.xpu.is_available()
            assert importlib.util.find_spec("torch_xla") is not None
            assert importlib.metadata.version("torch_xla") == torch.__version__.split("+")[0]
            import torch_xla.core.xla_model as xm
            import torch_xla.runtime as xr
            from torch_xla._internal import tpu
            assert str(xm.xla_device()) == "xla:0" and xr.device_type() == "TPU"
            assert tpu.num_available_devices() == 1
            with pytest.raises(AttributeError, match="is not simulated"):
                xm.all_gather  # noqa: B018
            raise KeyError("boom")
    assert "torch.backends.mps.is_built" in asked and "torch_xla.runtime.device_type" in asked
    assert probes() == before and sys.path == path and sys.meta_path == meta_path
    assert not [m for m in sys.modules if m.split(".")[0] == "torch_xla"]


def test_a_host_without_xla_hides_torch_xla_from_import_and_metadata(crossdev_module):
    import importlib.metadata
    import importlib.util
    import platform
    import torch
    from crossdev.picker_check import simulated_torch_probes
    with simulated_torch_probes({"cuda": 1}):
        assert torch.cuda.is_available() and not torch.backends.mps.is_built()
        assert platform.processor() != "arm"
        assert importlib.util.find_spec("torch_xla") is None
        with pytest.raises(importlib.metadata.PackageNotFoundError):
            importlib.metadata.version("torch-xla")
        with pytest.raises(ModuleNotFoundError, match="No module named 'torch_xla'"):
            import torch_xla  # noqa: F401
        assert importlib.metadata.version("torch")  # other packages are still found
