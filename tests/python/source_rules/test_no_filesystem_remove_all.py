"""No C++ source calls std::filesystem::remove_all.

LibTorch's pip builds export their own copies of the std::filesystem functions, and the dynamic
linker can bind a program's call to them. On an H100 host (torch 2.11+cu130, Ubuntu 24.04) the
MatrixLoader tests crashed inside libtorch_cpu.so's remove_all, a call through a null pointer; the
CPU wheel CI uses does not crash, so this check is what keeps the call out on CPU-only runners.
Folders are removed with nftw(3) (tests/gtest/scratch_dir.h).
"""
import re
import subprocess

from conftest import ROOT

CALL = re.compile(r"\bremove_all\s*\(")


def cxx_sources():
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.cpp", "*.h", "*.cu", "*.cuh"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / p for p in listed if (ROOT / p).exists()]


def calls_in(text):
    code = re.sub(r"//[^\n]*", "", text)  # comments may name it
    return [m.start() for m in CALL.finditer(code)]


def test_the_check_sees_a_call_and_ignores_a_comment():
    assert calls_in("void f() { std::filesystem::remove_all(dir); }")
    assert calls_in("fs::remove_all (dir);")
    assert not calls_in("// never std::filesystem::remove_all(dir)\nint x;")


def test_no_source_calls_filesystem_remove_all():
    sources = cxx_sources()
    assert len(sources) > 50, "git ls-files found too few C++ sources to judge"
    offenders = [str(p.relative_to(ROOT)) for p in sources if calls_in(p.read_text(errors="replace"))]
    assert not offenders, f"std::filesystem::remove_all called in {offenders}: use nftw (tests/gtest/scratch_dir.h)"
