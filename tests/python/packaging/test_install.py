"""crossdev as an installed tool (issue 22): the wheel's layout, its relative RPATHs, the `crossdev`
command, and the build backend's answers when torch is missing or too old. `make test` runs pytest
with the venv the wheel is installed in, so these tests look at the installed package."""
import json
import os
import pathlib
import re
import subprocess
import sys
import venv

import pytest

from conftest import ROOT, crossdev_command

SUBCOMMANDS = ("run", "devices", "resolve", "report", "merge", "gate", "bench-gate", "diff", "expectations", "repro")


@pytest.fixture(scope="module")
def package_dir():
    proc = subprocess.run([sys.executable, "-c", "import crossdev, sys; sys.stdout.write(crossdev.__file__)"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    folder = pathlib.Path(proc.stdout).parent
    if "site-packages" not in str(folder):
        pytest.fail(f"crossdev under test is {folder}, not an installed package: run through `make test` "
                    "(it installs the wheel into build/venv)")
    return folder


def runpaths(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, timeout=60).stdout
    return [p for m in re.finditer(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", out)
            for p in m.group(1).split(":")]


def test_the_wheel_holds_the_engine_its_libraries_the_catalog_and_the_cmake_package(package_dir):
    for relative in ("bin/crossdev", "lib/libcrossdev_core.so", "lib/libcrossdev_ops.so", "lib/libcrossdev_yaml.so",
                     "lib/libcrossdev_manager.so", "matrices/ops.yaml", "matrices/data/error_patterns.yaml",
                     "matrices/expectations", "share/cmake/crossdev/crossdevConfig.cmake",
                     "share/cmake/crossdev/crossdevTargets.cmake", "include/policy/preset.h",
                     "report/views/assets/report.css", "pytest_plugin.py", "cli.py"):
        assert (package_dir / relative).exists(), f"{relative} is missing from the installed package"
    assert list(package_dir.glob("_crossdev.*.so")), "the extension is missing"
    # The source tree's catalog, file for file.
    shipped = sorted(p.relative_to(package_dir / "matrices") for p in (package_dir / "matrices").rglob("*.yaml"))
    source = sorted(p.relative_to(ROOT / "matrices") for p in (ROOT / "matrices").rglob("*.yaml"))
    assert shipped == source
    # Test-only libraries stay in the build tree.
    assert not list(package_dir.rglob("*mutants*")) and not list(package_dir.rglob("*test_hooks*"))


def test_every_installed_binary_finds_its_libraries_through_relative_rpaths_only(package_dir):
    binaries = [package_dir / "bin" / "crossdev", *package_dir.glob("_crossdev.*.so"), *(package_dir / "lib").glob("*.so")]
    assert len(binaries) >= 6
    for binary in binaries:
        paths = runpaths(binary)
        assert paths, f"{binary.name} has no RUNPATH"
        assert all(p.startswith("$ORIGIN") for p in paths), f"{binary.name}: {paths}"
    config = (package_dir / "share/cmake/crossdev/crossdevTargets-release.cmake").read_text()
    assert str(ROOT) not in config and "${_IMPORT_PREFIX}/crossdev/lib/libcrossdev_core.so" in config


def test_crossdev_run_in_an_unrelated_folder_runs_the_built_in_catalog(cli, package_dir, tmp_path):
    out = tmp_path / "bundle.json"
    proc = cli("run", "--simulate", "cuda", "--filter", "presets.*", "--quiet", "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bundle = json.loads(out.read_text())
    assert bundle["cases"] and all(c["status"] == "pass" for c in bundle["cases"])
    files = {c.get("file", "") for c in bundle["cases"]} | set(map(str, bundle.get("matrices", [])))
    assert any(str(package_dir / "matrices") in f for f in files), files


def test_the_command_lists_its_subcommands_and_refuses_unknown_ones():
    command = crossdev_command()
    listed = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and all(f"  {s} " in listed.stdout for s in SUBCOMMANDS), listed.stdout
    unknown = subprocess.run([*command, "frobnicate"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "unknown command 'frobnicate'" in unknown.stderr
    assert "run, devices, resolve, report, merge, gate, bench-gate, diff, expectations, repro" in unknown.stderr
    bare = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert bare.returncode == 2 and "usage: crossdev" in bare.stdout


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_has_help(name):
    proc = subprocess.run([*crossdev_command(), name, "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "usage" in proc.stdout.lower()


@pytest.mark.parametrize("name", ["report", "merge", "gate", "bench-gate", "diff", "expectations", "repro"])
def test_the_python_subcommands_import_neither_torch_nor_the_core(name):
    code = ("import sys\nfrom crossdev.cli import main\ntry:\n    main([%r, '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('crossdev._crossdev')))") % name
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


def _bare_venv(folder):
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(folder)
    return folder / "bin" / "python"


@pytest.fixture(scope="module")
def torchless_python(tmp_path_factory):
    """A venv that sees no torch (and no scikit-build-core): what `pip install` meets on a bare machine."""
    return _bare_venv(tmp_path_factory.mktemp("no-torch") / "venv")


def pip_install(python, env=None):
    full = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1", **(env or {}))
    # This interpreter's pip, acting on the bare venv (`pip --python`): the build backend runs in the venv.
    return subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-build-isolation",
                           "--no-deps", str(ROOT)],
                          capture_output=True, text=True, timeout=300, env=full)


def test_pip_install_without_torch_says_to_install_torch_first(torchless_python):
    proc = pip_install(torchless_python)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "crossdev: no torch in" in out and "install torch (any 2.x) first" in out, out[-3000:]
    assert "CMake Error" not in out and "Traceback" not in out, out[-3000:]


def test_a_torch_older_than_supported_stops_the_build_naming_both_versions(torchless_python, tmp_path):
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "version.py").write_text("__version__ = '1.13.1'\n")
    proc = pip_install(torchless_python, env={"PYTHONPATH": str(tmp_path / "site")})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "crossdev needs torch >= 2.0; this environment has torch 1.13.1" in out, out[-3000:]
    assert "CMake Error" not in out, out[-3000:]
