"""The whole catalog two ways — `crossdev run --out Y` and `pytest matrices/ -n 2 --crossdev-bundle X`,
with `make report`'s simulate spec (`--crossdev-simulate`) — gives the same cases, in the same order, with the same
verdicts, devices and execution labels, and the same JUnit (classname, name, outcome). This is
the plugin's contract (issue 14): one engine, two front ends. It runs the catalog twice, once per
`make test` (measured on the 2-core machine under heavy load: about 4 min for the CLI, 2-4 min
for pytest -n 2); the pytest side uses xdist, so the bundle written from workers' records is
what is compared. The CLI's run is also the catalog's gate with every accelerator simulated (the same
command as ctest's crossdev_run_all_simulated, which `make test` leaves to this file): it must pass."""
import json
import subprocess
import sys

import pytest

from plugin_runner import ROOT, collected_ids, junit_cases, make_report_simulate, pytest_env, run_pytest

pytestmark = pytest.mark.schedule_first  # the catalog twice: minutes (conftest.py)

# pytest's outcome for each engine status (xpass: the strict xfail marker fails it).
PYTEST_OUTCOME = {"pass": "passed", "fail": "failure", "error": "failure", "crash": "failure", "xpass": "failure",
                  "skip": "skipped", "xfail": "skipped"}


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("verdicts")
    simulate = make_report_simulate()
    c = subprocess.run([sys.executable, "-m", "crossdev", "run", "--simulate", simulate, "--out", str(tmp / "cli.json"),
                        "--junit", str(tmp / "cli.xml"), "--quiet"], capture_output=True, text=True, cwd=ROOT,
                       env=pytest_env(), timeout=1800)
    workers = ["-n", "2", "--crossdev-xdist-rows"] if _have_xdist() else []
    p = run_pytest("matrices/", "-q", *workers, "--crossdev-simulate", simulate, "--crossdev-bundle", tmp / "plugin.json",
                   "--junitxml", tmp / "plugin.xml", timeout=1800)
    return c, p, tmp


def _have_xdist():
    try:
        import xdist  # noqa: F401,WPS433
    except ImportError:
        return False
    return True


def cases(path):
    return json.loads(path.read_text())["cases"]


def test_same_cases_same_verdicts_as_crossdev_run(both_runs):
    c, p, tmp = both_runs
    assert c.returncode == 0, c.stdout[-3000:] + c.stderr[-2000:]  # the catalog passes, every accelerator simulated
    assert p.returncode == c.returncode, p.stdout[-3000:] + p.stderr[-2000:]
    cli, plugin = cases(tmp / "cli.json"), cases(tmp / "plugin.json")
    key = ("id", "suite", "status", "execution", "device", "file", "line")
    assert [tuple(x[k] for k in key) for x in plugin] == [tuple(x[k] for k in key) for x in cli]


def test_same_bundle_header(both_runs):
    _, _, tmp = both_runs
    cli, plugin = (json.loads((tmp / name).read_text()) for name in ("cli.json", "plugin.json"))
    assert plugin["schema"] == cli["schema"] and plugin["schema_version"] == cli["schema_version"]
    assert plugin["matrices"] == cli["matrices"]
    assert plugin["summary"] == cli["summary"]


def test_same_junit_classnames_names_and_outcomes(both_runs):
    _, _, tmp = both_runs
    cli = sorted(junit_cases(tmp / "cli.xml"))
    plugin = sorted(junit_cases(tmp / "plugin.xml"))
    # `crossdev run` writes skipped for skip and xfail alike; failure for fail/xpass, error for error/crash.
    normal = {"error": "failure"}
    assert [(c, n, normal.get(o, o)) for c, n, o in plugin] == [(c, n, normal.get(o, o)) for c, n, o in cli]
    assert any(c.endswith(".simulated") for c, _, _ in plugin) and any(c.endswith(".real") for c, _, _ in plugin)


def test_plugin_items_are_the_cases_the_cli_ran(both_runs):
    _, p, tmp = both_runs
    ran = [x["id"] for x in cases(tmp / "cli.json")]
    r = run_pytest("matrices/", "--collect-only", "-q", "--crossdev-simulate", make_report_simulate())
    assert [name for _, name in collected_ids(r)] == ran
    # And each item's pytest outcome is the engine's status.
    outcomes = {n: o for _, n, o in junit_cases(tmp / "plugin.xml")}
    assert {x["id"]: PYTEST_OUTCOME[x["status"]] for x in cases(tmp / "cli.json")} == \
        {n: ("failure" if o == "error" else o) for n, o in outcomes.items()}
