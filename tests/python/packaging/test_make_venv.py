"""ci/make_venv.py, the venv `make install` creates: it sees the packages of the Python that made it,
also when that Python is itself a venv (where a user's torch usually is), and the creator's venv is
never written to."""
import importlib.util
import subprocess
import sys
import venv

from conftest import ROOT

SCRIPT = ROOT / "ci" / "make_venv.py"


def load_script():
    spec = importlib.util.spec_from_file_location("make_venv", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def site_packages(env):
    return next(env.glob("lib/python*/site-packages"))


def test_a_venv_made_by_a_venv_sees_the_creators_packages_after_its_own(tmp_path):
    creator = tmp_path / "creator"
    venv.EnvBuilder(with_pip=False).create(creator)
    (site_packages(creator) / "creator_only_marker.py").write_text("WHERE = 'creator'\n")
    before = sorted(p.name for p in site_packages(creator).iterdir())

    made = tmp_path / "made"
    subprocess.run([creator / "bin" / "python", SCRIPT, made, "--without-pip"], check=True)
    (site_packages(made) / "shadowed_marker.py").write_text("WHERE = 'made'\n")
    (site_packages(creator) / "shadowed_marker.py").write_text("WHERE = 'creator'\n")
    out = subprocess.run([made / "bin" / "python", "-c",
                          "import creator_only_marker, shadowed_marker; print(creator_only_marker.WHERE, shadowed_marker.WHERE)"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["creator", "made"]  # the creator's packages are seen; the new venv's own win
    assert sorted(p.name for p in site_packages(creator).iterdir()) == sorted(before + ["shadowed_marker.py"])


def test_a_python_that_is_not_a_venv_adds_nothing(monkeypatch):
    module = load_script()
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    assert module.creator_site_dirs() == []


def test_an_unwritable_folder_is_exit_2_naming_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = subprocess.run([sys.executable, SCRIPT, blocker / "venv", "--without-pip"], capture_output=True, text=True)
    assert out.returncode == 2 and str(blocker) in out.stderr, out.stderr
