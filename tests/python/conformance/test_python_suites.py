"""The suites defined in Python are records of python/crossdev/python_suites.json (docs/ARCHITECTURE.md,
"A Python suite"): the worker's modules, the keys' choices and defaults, and each suite page's key table
come from the record; the engine's side is test_python_suites.cpp."""
import importlib
import re

from conftest import ROOT

from crossdev import python_suites


def key_table(page):
    """The keys of the first `| key | req. | meaning |` table of a docs page, with their req. column."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    start = lines.index("| key | req. | meaning |")
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("| `"):
            break
        key, required = re.match(r"\| `(\w+)` \| (yes|no) \|", line).groups()
        rows.append((key, required == "yes"))
    return rows


def test_each_suite_page_lists_its_records_keys_in_order_with_their_requiredness():
    for name, record in python_suites.SUITES.items():
        want = [(k["key"], bool(k.get("required"))) for k in record["keys"]]
        assert key_table(record["doc"]) == want, f"{record['doc']}'s key table against python_suites.json's {name}"


def test_each_record_names_modules_that_serve_its_requests():
    for name, record in python_suites.SUITES.items():
        run = importlib.import_module(record["run_module"])
        assert callable(run.run) and callable(run.check), name
        assert hasattr(run, "plan_cases") == (record["planned_by"] == "worker"), \
            f"{name}: plan_cases exists exactly when the worker plans the suite"
        if record["check_module"]:
            assert callable(importlib.import_module(record["check_module"]).check), name


def test_the_suites_constants_are_their_records():
    from crossdev.models import compare, randomness
    from crossdev.opinfo import row_check
    assert row_check.CHECKS == ("forward", "backward") == python_suites.choices("opinfo", "checks")
    assert row_check.DEFAULT_MAX_SAMPLES == python_suites.key("opinfo", "max_samples")["default"]
    assert compare.CHECKS == python_suites.choices("models", "checks") and "train" in compare.CHECKS
    assert randomness.SEED_POLICIES == python_suites.choices("models", "seed_policy")
    assert compare.DEFAULT_STEPS == python_suites.default("models", "steps")
