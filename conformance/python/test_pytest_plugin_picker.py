"""Device-picker checks (--crossdev-picker MODULE:CALLABLE --crossdev-picker-preset NAME): one item
per simulated host profile, the picker's answer against the preset's decision, and every patched
probe restored afterwards, even when the picker raises."""
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


def test_a_correct_picker_passes_on_every_host(tmp_path, hosts):
    # cuda-first written out by hand from the probes the plugin patches.
    r = picker_run(tmp_path, "good:pick", modules={"good": """
        import importlib.util, torch
        def pick():
            if torch.cuda.is_available(): return "cuda"
            if torch.xpu.is_available(): return "xpu"
            if torch.backends.mps.is_available(): return "mps"
            if importlib.util.find_spec("torch_xla") is not None: return "tpu"
            return "cpu"
        """})
    assert r.returncode == 0, r.stdout + r.stderr
    assert outcomes(r) == {h: "PASSED" for h in hosts}


def test_a_wrong_picker_fails_where_the_preset_picks_an_accelerator(tmp_path, hosts, crossdev_module):
    r = picker_run(tmp_path, "bad:pick", modules={"bad": "def pick():\n    return 'cpu'\n"})
    assert r.returncode == 1
    want = {h: ("PASSED" if decision(crossdev_module, h) == "cpu" else "FAILED") for h in hosts}
    assert outcomes(r) == want
    assert "preset cuda-first picks" in r.stdout and "returned 'cpu'" in r.stdout


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


def test_every_probe_is_restored_even_when_the_picker_raises(tmp_path):
    r = picker_run(tmp_path, "raising:pick", "-p", "restore_check", modules={
        "raising": "def pick():\n    raise RuntimeError('picker blew up')\n",
        # A plugin loaded before crossdev's: notes the probes first, compares them at the end.
        "restore_check": """
            import importlib.util, torch
            def probes():
                return [torch.cuda.is_available, torch.cuda.device_count, torch.backends.mps.is_available,
                        torch.xpu.is_available, torch.xpu.device_count, importlib.util.find_spec]
            ORIGINAL = probes()
            def pytest_sessionfinish(session):
                same = all(a is b for a, b in zip(ORIGINAL, probes()))
                open("restored.txt", "w").write("PROBES RESTORED" if same else "PROBES LEFT PATCHED")
            """})
    assert r.returncode == 1
    assert "picker blew up" in r.stdout
    assert (tmp_path / "restored.txt").read_text() == "PROBES RESTORED", r.stdout[-3000:]


def test_patches_apply_inside_and_are_undone_after_an_exception(crossdev_module):
    import importlib.util
    import torch
    from crossdev.pytest_plugin import simulated_torch_probes
    before = (torch.cuda.is_available, torch.backends.mps.is_available, torch.xpu.is_available,
              importlib.util.find_spec)
    with pytest.raises(KeyError):
        with simulated_torch_probes({"cuda": 2, "xla": 1}):
            assert torch.cuda.is_available() and torch.cuda.device_count() == 2
            assert not torch.backends.mps.is_available() and not torch.xpu.is_available()
            assert importlib.util.find_spec("torch_xla") is not None
            raise KeyError("boom")
    assert (torch.cuda.is_available, torch.backends.mps.is_available, torch.xpu.is_available,
            importlib.util.find_spec) == before
