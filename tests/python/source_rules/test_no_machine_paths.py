"""No tracked file holds an absolute path into a build machine's checkout or temp folder.

A file that runs `/work/main/build/venv/bin/python` or `/tmp/prof/wrap.py` works on the one machine
that wrote it and nowhere else (issue 38: `py.sh` and `m/s.yaml` belonged to nobody). Two shapes are
refused, wherever they appear (code, docs, data):
- a checkout: an absolute path under a machine's work roots (MACHINE_ROOTS) that goes on into one of
  this repository's top-level folders, `build/`, or the `shared/` folder beside the checkout
  (`/work/main/build/lib`, `/home/me/crossdev/impl/x.cpp`, `/work/shared/seeds/...`), or the path
  of this very checkout;
- a temp folder: a file under a folder of `/tmp` (`/tmp/prof/wrap.py`); `/tmp/out` (the GPU host's
  default $OUT in ci/gpu) and the harness's own `/tmp/crossdev_*` names are not machine paths.
Tests that need a path as data build it from `tmp_path` or use a root no machine has (`/ckout-a`).
"""
import re
import subprocess

from conftest import ROOT

MACHINE_ROOTS = ("work", "home", "root", "tmp", "scratch", "mnt", "data", "Users", "builds", "srv")
_SEP = r"(?<![\w.~$}/-])"  # a path that starts here, not inside a longer word, URL or ${VAR}/...


def top_level_names() -> set:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {p.split("/", 1)[0] for p in listed.split() if "/" in p} | {"build", "shared"}


def patterns(tops, checkout):
    into_checkout = re.compile(_SEP + r"/(?:" + "|".join(MACHINE_ROOTS) + r")(?:/[\w.+-]+)*/(?:"
                               + "|".join(map(re.escape, sorted(tops))) + r")(?=/|\b)")
    temp_file = re.compile(_SEP + r"/tmp/(?!out\b|crossdev_)[\w.+-]+/[\w.+/-]*\w")
    this_checkout = re.compile(re.escape(str(checkout)) + r"(?=/|\b)")
    return into_checkout, temp_file, this_checkout


def machine_paths(text, tops=None, checkout=ROOT):
    found = []
    for pattern in patterns(tops if tops is not None else top_level_names(), checkout):
        found += [m.group(0) for m in pattern.finditer(text)]
    return found


def tracked_text_files():
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    for rel in listed:
        path = ROOT / rel
        if not path.is_file() or path.suffix in (".gz", ".png", ".whl"):
            continue
        try:
            yield rel, path.read_text()
        except UnicodeDecodeError:
            continue


def test_the_check_sees_each_shape_and_passes_the_allowed_ones():
    tops = {"impl", "build", "shared", "matrices"}
    assert machine_paths("exec /work/main/build/venv/bin/python", tops, "/nowhere")
    assert machine_paths('copied from /work/shared/seeds/004_x.txt', tops, "/nowhere")
    assert machine_paths("see /home/me/src/crossdev/impl/ops/op.cpp", tops, "/nowhere")
    assert machine_paths("python /tmp/prof/wrap.py", tops, "/nowhere")
    assert machine_paths("cd /somewhere/else/x", tops, "/somewhere/else")
    for fine in ("OUT=${OUT:-/tmp/out}", "/tmp/crossdev_manager_ckpt_1_0.pt", "$build/impl/x", "build/venv/bin/python",
                 "https://github.com/pytorch/pytorch/tree/main/test", "/ckout-a/matrices/x.yaml", "/usr/lib/x.so",
                 "~/work/impl"):
        assert not machine_paths(fine, tops, "/nowhere"), fine


def test_no_tracked_file_holds_a_machine_path():
    tops = top_level_names()
    offenders = [f"{rel}: {', '.join(sorted(set(found)))}" for rel, text in tracked_text_files()
                 if rel != "tests/python/source_rules/test_no_machine_paths.py" and (found := machine_paths(text, tops))]
    assert not offenders, "absolute paths of one machine in tracked files:\n" + "\n".join(offenders)
