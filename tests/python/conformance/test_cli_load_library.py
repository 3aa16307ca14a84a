"""`crossdev run --load-library`: a library loaded at run time overrides crossdev's kernels through
the dispatcher. The test-only mutants library proves the matrix turns red with a broken kernel
loaded this way, and green again without it.

A library that does not load is bad input (exit 2), naming the library and the loader's or
PyTorch's message, never an abort: one the loader cannot open, one that is not a shared library,
and one whose static registration throws (a TORCH_LIBRARY namespace that is taken: crossdev's own,
or a second copy of an extension already loaded), which in-process would end the run with
std::terminate (exit 134 and a core). The libraries are loaded once in a child process first
(`crossdev load-check`, impl/util/load_library.h); the pytest plugin's --crossdev-load-library
does the same (crossdev.libraries) and reports a usage error (exit 4)."""
import shutil
import subprocess

import pytest

from plugin_runner import run_pytest


@pytest.fixture(scope="module")
def mutants_library(built_library):
    return built_library("crossdev_mutants")


def test_a_loaded_mutant_turns_its_rows_red(cli, mutants_library):
    red = cli("run", "--filter", "ops.rotary*", "--quiet", "--load-library", mutants_library,
              env={"CROSSDEV_MUTANT": "rotary.sin_sign_flipped"})
    assert red.returncode == 1, red.stdout + red.stderr
    assert "FAIL" in red.stdout.upper()
    green = cli("run", "--filter", "ops.rotary*", "--quiet", "--load-library", mutants_library)
    assert green.returncode == 0, green.stdout + green.stderr


def test_the_mutant_env_var_alone_changes_nothing(cli):
    # The production CLI never reads CROSSDEV_MUTANT: only the test library does, when loaded.
    r = cli("run", "--filter", "ops.rotary*", "--quiet", env={"CROSSDEV_MUTANT": "rotary.sin_sign_flipped"})
    assert r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------------------- libraries that do not load

def bad_library(kind, tmp_path, built_library):
    """(libraries to load, the one that fails, words its message must hold)."""
    if kind == "missing":
        missing = tmp_path / "libnothere.so"
        return [missing], missing, ["No such file"]
    if kind == "not_a_shared_library":
        text = tmp_path / "libtext.so"
        text.write_text("this is a text file named like a shared library, not an ELF object\n" * 4)
        return [text], text, ["invalid ELF header", "expected a shared library"]
    if kind == "clashes_with_crossdev":
        clash = built_library("crossdev_test_clash")
        return [clash], clash, ["Only a single TORCH_LIBRARY can be used to register the namespace crossdev;",
                                "TORCH_LIBRARY", "threw c10::Error"]
    if kind == "same_extension_twice":
        original = built_library("crossdev_test_candidates")
        copy = tmp_path / "libcrossdev_test_candidates_copy.so"
        shutil.copyfile(original, copy)
        return [original, copy], copy, ["register the namespace crossdev_test", "threw c10::Error"]
    raise AssertionError(kind)


BAD_KINDS = ["missing", "not_a_shared_library", "clashes_with_crossdev", "same_extension_twice"]


def assert_reported(proc, failing, words, option="--load-library", returncode=2):
    """One clear line naming the library and the message: no abort, no core, no backtrace."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == returncode, f"exit {proc.returncode}\n{out}"
    lines = [line for line in proc.stderr.splitlines() if f"cannot load '{failing}'" in line]
    assert len(lines) == 1, proc.stderr
    assert f"{option}: cannot load '{failing}': " in lines[0], lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    for sign in ("terminate called", "Aborted", "core dumped", "frame #", "Exception raised from", "Traceback",
                 "\"event\":\"loading\"", "\"event\":\"fatal\""):  # the check child's events stay inside
        assert sign not in out, out


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_library_that_does_not_load_is_bad_input(cli, tmp_path, built_library, kind):
    libraries, failing, words = bad_library(kind, tmp_path, built_library)
    args = [a for library in libraries for a in ("--load-library", library)]
    out = tmp_path / "bundle.json"
    r = cli("run", "--filter", "ops.rotary*", "--out", out, *args)
    assert_reported(r, failing, words)
    assert not out.exists(), "bad input: nothing runs, nothing is written"


def test_the_check_covers_no_isolate_and_lists(cli, tmp_path, built_library):
    libraries, failing, words = bad_library("same_extension_twice", tmp_path, built_library)
    r = cli("run", "--filter", "ops.rotary*", "--no-isolate", "--load-library", ":".join(map(str, libraries)))
    assert_reported(r, failing, words)


def test_the_same_path_twice_is_loaded_once(cli, built_library):
    # The loader maps one file once (a second dlopen of it runs no initialiser): not an error.
    candidates = built_library("crossdev_test_candidates")
    r = cli("run", "--filter", "ops.rotary*", "--quiet", "--load-library", candidates, "--load-library", candidates)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("how, words", [
    ("throw", ["its static initialisation threw std::runtime_error: bad_init: refusing to initialise "
               "second line of the message"]),
    ("segv", ["the process loading it was killed by signal 11 (SIGSEGV) while loading it"]),
    ("exit", ["the process loading it exited with status 7"]),
])
def test_a_static_initialiser_that_throws_crashes_or_exits_is_bad_input(cli, built_library, how, words):
    bad_init = built_library("crossdev_test_bad_init")
    r = cli("run", "--filter", "ops.rotary*", "--load-library", bad_init, env={"CROSSDEV_TEST_BAD_INIT": how})
    assert_reported(r, bad_init, words)


def test_the_check_library_loads_cleanly_when_told_nothing(cli, built_library):
    # The same library without CROSSDEV_TEST_BAD_INIT: the check passes, the run runs.
    r = cli("run", "--filter", "ops.rotary*", "--quiet", "--load-library", built_library("crossdev_test_bad_init"))
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_check_subcommand_is_internal():
    from crossdev import _paths
    r = subprocess.run([str(_paths.engine_binary()), "--help"], capture_output=True, text=True,
                       env=_paths.engine_environment(), timeout=120)
    assert r.returncode == 0 and "run" in r.stdout, r.stdout + r.stderr
    assert "load-check" not in r.stdout


# ---------------------------------------------------------------------------- the same through Python

@pytest.mark.parametrize("kind", BAD_KINDS)
def test_the_plugin_reports_a_library_that_does_not_load_as_a_usage_error(tmp_path, built_library, kind):
    libraries, failing, words = bad_library(kind, tmp_path, built_library)
    args = [a for library in libraries for a in ("--crossdev-load-library", library)]
    r = run_pytest("matrices/redirect_table.yaml", "--collect-only", "-q", *args)
    assert_reported(r, failing, words, option="--crossdev-load-library", returncode=4)  # pytest's usage error


def test_libraries_check_raises_naming_the_library(tmp_path, built_library):
    from crossdev import libraries
    libraries.check([])  # nothing to check
    clash = built_library("crossdev_test_clash")
    with pytest.raises(libraries.LoadLibraryError) as e:
        libraries.check([clash])  # in a child process: this process is unharmed
    assert str(e.value).startswith(f"cannot load '{clash}': its static initialisation threw c10::Error: ")
    assert "namespace crossdev;" in str(e.value)
