"""Drives every redirect and context matrix row through the Python module, reading the YAML with
PyYAML: an implementation of the matrix reader independent of the C++ one."""
import pathlib

import pytest
import yaml

MATRICES = pathlib.Path(__file__).resolve().parents[2] / "matrices"


def rows(suite):
    out = []
    for path in sorted(MATRICES.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if doc.get("suite") != suite:
            continue
        defaults = doc.get("defaults") or {}
        for row in doc["cases"]:
            out.append({**defaults, **row})
    return out


def as_list(value):
    return value if isinstance(value, list) else [value]


def same_device(a, b):
    da, db = a.partition(":"), b.partition(":")
    if da[0] != db[0]:
        return False
    if da[0] in ("cpu", "mps"):  # None and 0 are the same device there (seed 002)
        return (da[2] or "0") == (db[2] or "0")
    return da[2] == db[2]


REDIRECT_ROWS = rows("redirect")


@pytest.mark.parametrize("row", REDIRECT_ROWS, ids=[r["id"] for r in REDIRECT_ROWS])
def test_redirect_row(crossdev_module, row):
    requests = as_list(row["request"])
    expects, actions = as_list(row["expect"]), as_list(row["action"])
    vias = as_list(row.get("via", "create"))
    if len(vias) == 1:
        vias = vias * len(requests)
    # The module resolves a sequence against one state but with one via; vias only label the
    # request path (seed 002: .to() follows the same rules), so resolve step by step per via.
    decisions = crossdev_module.resolve(requests, host=row["host"], policy=row.get("policy", "torchdevice"),
                                        cpu_override=bool(row.get("override", False)),
                                        allow_redirects=str(row.get("allow_redirects", "")), via=vias[0])
    for step, (d, exp, act) in enumerate(zip(decisions, expects, actions), 1):
        assert d["simulated"] is (row["host"] != "cpu-only")  # every accelerator here is hypothetical
        assert same_device(d["resolved"], exp) and d["action"] == act, (
            f"{row['id']} step {step}: expected {exp} [{act}], got {d['resolved']} [{d['action']}]: {d['reason']}")


def test_matrix_covers_every_cell_of_seed_002_table():
    ids = {r["id"] for r in REDIRECT_ROWS}
    requests = ["none", "cpu", "cpu-n", "cpu-override", "mps", "mps-0", "cuda", "cuda-1"]
    columns = ["mps", "cuda-x1", "cpu-only"]  # the seed's three columns
    for req in requests:
        for col in columns:
            for state in ("on", "off"):
                assert f"table.{req}.{col}.override-{state}" in ids


CONTEXT_ROWS = rows("context")


@pytest.mark.parametrize("row", CONTEXT_ROWS, ids=[r["id"] for r in CONTEXT_ROWS])
def test_context_row(crossdev_module, row):
    device, check, expect = row["device"], row["check"], row["expect"]
    if check == "autocast":
        assert crossdev_module.autocast_device_type(device) == expect
    elif check in ("inference", "inference_guard"):
        assert crossdev_module.inference_context(device) == expect
    elif check == "compile":
        assert crossdev_module.compile_eligible(device) == (expect == "eligible")
    elif check == "distributed":
        if expect == "ok":
            crossdev_module.require_distributed_supported(device)
        else:
            with pytest.raises(RuntimeError) as err:
                crossdev_module.require_distributed_supported(device)
            assert str(err.value) == row["expect_error"]
    else:
        pytest.fail(f"unknown check {check}")


def test_presets_are_listed_with_their_orders(crossdev_module):
    presets = {p["name"]: p for p in crossdev_module.presets()}
    assert set(presets) == {"torchdevice", "cuda-first", "hf-accelerate", "lightning"}
    assert presets["torchdevice"]["order"] == ["mps", "cuda"]
    assert presets["cuda-first"]["order"][0] == "cuda"
