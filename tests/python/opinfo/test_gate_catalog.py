"""The gate's power, proved in make test (issue 47, docs/opinfo.md "The gate's power"): every mutant of the
catalog (tests/mutants/aten/catalog.json, one library each) is loaded into sim under the cuda profile; every
target case of a `bug` mutant fails, every target case of a `legitimate` one passes. Each group of the catalog
is one engine run, with CROSSDEV_SIM_DIVERGE=all (sim differs from the CPU wherever a real device may) and
without (sim is the CPU's kernels): a rule that forgives a device difference must still catch the bug either way."""
import json
import pathlib

import pytest

from conftest import requires_sim

pytestmark = requires_sim

CATALOG = json.loads((pathlib.Path(__file__).resolve().parents[2] / "mutants" / "aten" / "catalog.json").read_text())
MUTANTS = CATALOG["mutants"]
GROUPS = sorted({m["group"] for m in MUTANTS})
DIVERGE = {"all": "all", "off": "0"}


def matrix_for(group) -> str:
    mutants = [m for m in MUTANTS if m["group"] == group]
    ops = sorted({case.rsplit("/", 1)[0] for m in mutants for case in m["cases"]})
    checks = sorted({case.rsplit("/", 1)[1] for m in mutants for case in m["cases"]})
    return ("suite: opinfo\ncases:\n"
            f"  - {{id: g{group}, source: \"tests/mutants/aten/catalog.json\", intent: \"the gate's power\", "
            f"opinfo: {json.dumps(ops)}, devices: [cuda], dtypes: [float32], checks: {json.dumps(checks)}, max_samples: 6}}\n")


@pytest.fixture(scope="module", params=[(g, d) for g in GROUPS for d in DIVERGE], ids=lambda p: f"group{p[0]}-diverge_{p[1]}")
def group_run(request, cli, tmp_path_factory, built_library):
    group, diverge = request.param
    tmp = tmp_path_factory.mktemp(f"gate{group}{diverge}")
    (tmp / "gate.yaml").write_text(matrix_for(group))
    libraries = [arg for m in MUTANTS if m["group"] == group
                 for arg in ("--load-library", built_library(f"crossdev_test_aten_mutant_{m['name']}"))]
    bundle = tmp / "bundle.json"
    proc = cli("run", "--matrix", tmp / "gate.yaml", "--simulate", "cuda", "--out", bundle, *libraries,
               env={"CROSSDEV_SIM_DIVERGE": DIVERGE[diverge]})
    assert bundle.exists(), proc.stdout + proc.stderr
    cases = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}
    return group, proc, cases


def test_every_bug_fails_its_target_cases_and_every_legitimate_difference_passes(group_run):
    group, proc, cases = group_run
    missed = []
    for mutant in (m for m in MUTANTS if m["group"] == group):
        for target in mutant["cases"]:
            op, check = target.rsplit("/", 1)
            case = cases[f"g{group}/{op}/cuda/float32/{check}"]
            wanted = "fail" if mutant["kind"] == "bug" else "pass"
            if case["status"] != wanted:
                missed.append(f"{mutant['name']} ({mutant['rule']}): {target} is {case['status']}, expected {wanted}: "
                              f"{case.get('message', '')[:300]}")
            elif wanted == "pass":
                assert case["metrics"]["samples"] >= 1, case  # a pass says what it compared
    assert not missed, "\n".join(missed)
    bugs = any(m["kind"] == "bug" for m in MUTANTS if m["group"] == group)
    assert proc.returncode == (1 if bugs else 0), proc.stdout[-2000:] + proc.stderr[-2000:]


def test_the_catalog_holds_a_mutant_for_every_rule_that_forgives_a_difference():
    rules = {m["rule"].split(" (")[0] for m in MUTANTS if m["kind"] == "bug"}
    for rule in ("random ops by their law", "the float64 rule, element by element", "inputs updated in place are compared",
                 "a random op's backward against its own forward draw", "output_process_fn_grad",
                 "op_db's expectedFailure not taken where open outputs explain it"):
        assert rule in rules, rule
    assert sum(m["kind"] == "bug" for m in MUTANTS) >= 12


def _group_of(name):
    return next(m["group"] for m in MUTANTS if m["name"] == name)


def test_eigenvalues_one_percent_off_fail_and_the_float64_rule_passes_none_of_their_elements(group_run):
    group, _, cases = group_run
    if group != _group_of("linalg_eigh_values_off_1pct"):
        pytest.skip("another group's run")
    for check in ("forward", "backward"):
        case = cases[f"g{group}/linalg.eigh/cuda/float32/{check}"]
        assert "float64_rule_passes" not in case["metrics"], case
        assert "outside tolerance beyond 4x" in case["details"]["failing_samples"], case


def test_a_bernoulli_that_keeps_every_element_fails_its_law_naming_the_aten_call(group_run):
    group, _, cases = group_run
    if group != _group_of("bernoulli_keeps_all"):
        pytest.skip("another group's run")
    case = cases[f"g{group}/nn.functional.dropout2d/cuda/float32/forward"]
    assert case["message"].startswith("random op: aten::bernoulli_.float Bernoulli(p="), case
    assert "aten::bernoulli_" in case["details"]["random_ops"], case
