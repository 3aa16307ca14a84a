"""No test file registers the sim backend where the host has a real accelerator.

Registering sim (PrivateUse1) beside a real cuda makes LibTorch's autograd engine take sim for the
accelerator and breaks backward on cuda (conformance/runner/run_context.cpp). A test file runs in an
xdist worker's process, so one registration reaches every file that worker runs after it. On an H100
host (2026-11-26) test_dropout_generator.py's module fixture registered sim unconditionally, and its
cuda backward case failed. A call of `<module>.sim.register()` is allowed only in conftest.py (the
session fixture and register_sim_where_allowed, both conditional on REAL_ACCELERATOR) or in a file
whose every case is skipped there (`pytestmark = requires_sim`). CPU-only CI never has a real
accelerator, so this source check is what keeps the rule there.
"""
import pathlib
import re

from conftest import ROOT

REGISTER = re.compile(r"\bsim\.register\s*\(")
SKIPPED_WITH_A_REAL_ACCELERATOR = re.compile(r"^pytestmark\s*=\s*(?:\[[^\]]*)?\brequires_sim\b", re.M)


def registers_sim_unconditionally(text):
    code = re.sub(r"#[^\n]*", "", text)  # comments may name it
    return bool(REGISTER.search(code)) and not SKIPPED_WITH_A_REAL_ACCELERATOR.search(code)


def test_the_check_sees_a_registration_and_honours_requires_sim():
    fixture = "@pytest.fixture(scope='module', autouse=True)\ndef sim_backend():\n    crossdev.sim.register()\n"
    assert registers_sim_unconditionally(fixture)
    assert not registers_sim_unconditionally("pytestmark = requires_sim\n" + fixture)
    assert not registers_sim_unconditionally("pytestmark = [requires_sim, pytest.mark.slow]\n" + fixture)
    assert not registers_sim_unconditionally("# never crossdev.sim.register() here\nregister_sim_where_allowed(crossdev)\n")


def test_no_test_file_registers_sim_beside_a_real_accelerator():
    this_file = pathlib.Path(__file__).resolve()  # its own samples name the call
    files = sorted(p for p in (ROOT / "tests" / "python").rglob("test_*.py") if p.resolve() != this_file)
    assert len(files) > 50, "found too few test files to judge"
    offenders = [str(p.relative_to(ROOT)) for p in files if registers_sim_unconditionally(p.read_text(errors="replace"))]
    assert not offenders, (f"{offenders} register the sim backend even where the host has a real accelerator: "
                           "use conftest.register_sim_where_allowed or mark the file requires_sim")
