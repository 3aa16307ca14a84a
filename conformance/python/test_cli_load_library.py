"""`crossdev run --load-library`: a library loaded at run time overrides crossdev's kernels through
the dispatcher. The test-only mutants library proves the matrix turns red with a broken kernel
loaded this way, and green again without it; a library that does not load is bad input (exit 2)."""
import pytest


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


def test_a_library_that_does_not_load_is_bad_input(cli, tmp_path):
    missing = tmp_path / "libnothere.so"
    r = cli("run", "--filter", "ops.rotary*", "--load-library", missing)
    assert r.returncode == 2
    assert str(missing) in r.stderr and "cannot load" in r.stderr
