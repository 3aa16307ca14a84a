"""The redirect matrices' coverage of seed 002's table, and the presets the Python module lists.

The rows themselves run as pytest items through crossdev.pytest_plugin (`pytest matrices/`),
with the engine `crossdev run` uses; test_pytest_plugin.py checks the plugin's items against
the row ids PyYAML reads, and test_pytest_plugin_verdicts.py its verdicts against the CLI's."""
import pathlib

import yaml

MATRICES = pathlib.Path(__file__).resolve().parents[3] / "matrices"


def redirect_rows():
    for path in sorted(MATRICES.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if doc.get("suite") == "redirect":
            for row in doc["cases"]:
                yield {**doc.get("defaults", {}), **row}


def redirect_ids():
    return {row["id"] for row in redirect_rows()}


def test_matrix_covers_every_cell_of_seed_002_table():
    ids = redirect_ids()
    requests = ["none", "cpu", "cpu-n", "cpu-override", "mps", "mps-0", "cuda", "cuda-1"]
    columns = ["mps", "cuda-x1", "cpu-only"]  # the seed's three columns
    for req in requests:
        for col in columns:
            for state in ("on", "off"):
                assert f"table.{req}.{col}.override-{state}" in ids


def test_presets_are_listed_with_their_orders(crossdev_module):
    presets = {p["name"]: p for p in crossdev_module.presets()}
    # Every preset of the table has redirect rows, and the rows name no other: adding a preset is
    # its row in impl/policy/preset.cpp plus rows proving it, and no edit here.
    assert set(presets) == {row["policy"] for row in redirect_rows() if "policy" in row}
    assert presets["torchdevice"]["order"] == ["mps", "cuda"]
    assert presets["cuda-first"]["order"][0] == "cuda"
