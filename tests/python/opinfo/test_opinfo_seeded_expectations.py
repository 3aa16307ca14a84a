"""The opinfo expectation files seeded from PyTorch's own lists (matrices/opinfo/expectations/opinfo/
mps.yaml by ci/seed_mps_opinfo_expectations.py from the installed torch's common_mps.py; xpu.yaml from
intel/torch-xpu-ops' skip list): the engine's loader accepts them, and every entry of PyTorch's MPS
lists is in mps.yaml, named by its line (or listed as having no OpInfo). Fast: no op_db, no case runs."""
import importlib.util
import pathlib
import shutil

from conftest import ROOT

SEEDED = ROOT / "matrices" / "opinfo" / "expectations" / "opinfo"


def test_the_loader_accepts_the_seeded_files(cli, tmp_path):
    """A row over mps and xpu loads both files when the matrix loads (a bad entry is exit 2 with file:line
    before anything runs); --filter then selects nothing, so no worker starts."""
    (tmp_path / "expectations" / "opinfo").mkdir(parents=True)
    for kind in ("mps", "xpu"):
        shutil.copy(SEEDED / f"{kind}.yaml", tmp_path / "expectations" / "opinfo" / f"{kind}.yaml")
    (tmp_path / "m.yaml").write_text('suite: opinfo\ncases:\n  - {id: t.seed, source: s, intent: i, opinfo: "*", '
                                     'devices: [mps, xpu], dtypes: [float32]}\n')
    proc = cli("run", "--matrix", tmp_path / "m.yaml", "--filter", "no.such.row", "--out", tmp_path / "b.json")
    assert proc.returncode == 2 and "nothing selected" in proc.stderr, proc.stderr
    assert "expectations" not in proc.stderr, f"a seeded file was refused: {proc.stderr}"


def _generator():
    spec = importlib.util.spec_from_file_location("seed_mps", ROOT / "ci" / "seed_mps_opinfo_expectations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_entry_of_pytorchs_mps_lists_is_in_mps_yaml_naming_its_source_line():
    seed = _generator()
    text = (SEEDED / "mps.yaml").read_text()
    lists = seed.read_lists(seed.common_mps_path())  # read with ast: the module is not imported
    assert sum(len(entries) for entries in lists.values()) > 100, "the lists were read"
    for (func, name), entries in lists.items():
        for key, _, line, _ in entries:
            assert f"common_mps.py:{line} {func}.{name} " in text or f"{name}:{key}" in text, \
                f"{func}.{name}[{key!r}] (line {line}) is not in {SEEDED / 'mps.yaml'}: " \
                f"regenerate it with ci/seed_mps_opinfo_expectations.py"
    seeded = [line for line in text.splitlines() if line.startswith("  - {") and seed.SOURCE in line]
    assert seeded and all("execution: real" in line for line in seeded), "every seeded entry is for real MPS, never sim"
