"""crossdev's libraries call the functions they define themselves, never another library's copy.

LibTorch's pip builds export their own instantiations of std templates (std::regex's compiler in
libtorch_python.so) and copies of libstdc++ functions (std::filesystem in libtorch_cpu.so). Without
-Bsymbolic-functions (cmake/CrossdevLinking.cmake) a crossdev library's call to an instantiation it
defines goes through the PLT and, in a process where torch came first, lands in torch's copy: on an
H100 host (torch 2.11+cu130, GCC 13) loading a catalog from Python crashed inside libtorch_python.so.
The CPU wheel CI uses happens not to crash, so the binding itself is what this file checks: no PLT
slot (R_X86_64_JUMP_SLOT) of a crossdev library names a function that library defines.
"""
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD_DIR

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("readelf") is None,
                                reason="ELF binding: Linux with binutils' readelf only")


def defined_functions(dyn_syms):
    """Names of the FUNC symbols a `readelf -W --dyn-syms` listing defines (Ndx not UND)."""
    names = set()
    for line in dyn_syms.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[3] == "FUNC" and f[6] != "UND":
            names.add(f[7].split("@")[0])
    return names


def plt_symbols(relocations):
    """Names the PLT slots of a `readelf -W -r` listing are resolved by."""
    names = set()
    for line in relocations.splitlines():
        m = re.match(r"\s*[0-9a-f]+\s+[0-9a-f]+\s+R_X86_64_JUMP_SLOT\s+[0-9a-f]+\s+(\S+)", line)
        if m:
            names.add(m.group(1).split("@")[0])
    return names


def interposable_calls(path):
    """Functions `path` defines but calls through its PLT (what another library could take over)."""
    syms = subprocess.run(["readelf", "-W", "--dyn-syms", str(path)], capture_output=True, text=True, check=True).stdout
    relocs = subprocess.run(["readelf", "-W", "-r", str(path)], capture_output=True, text=True, check=True).stdout
    return sorted(defined_functions(syms) & plt_symbols(relocs))


SYMS = """
Symbol table '.dynsym' contains 3 entries:
   Num:    Value          Size Type    Bind   Vis      Ndx Name
     1: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND _ZN2at6Tensor4sizeEl
     2: 0000000000012340    64 FUNC    WEAK   DEFAULT   14 _ZNSt8__detail9_CompilerIE7_M_atomEv
     3: 0000000000012400    32 OBJECT  GLOBAL DEFAULT   23 _ZN8crossdev5tableE
"""
RELOCS = """
Relocation section '.rela.plt' at offset 0x1000 contains 2 entries:
    Offset             Info             Type               Symbol's Value  Symbol's Name + Addend
0000000000098000  0000000100000007 R_X86_64_JUMP_SLOT     0000000000000000 _ZN2at6Tensor4sizeEl + 0
0000000000098008  0000000200000007 R_X86_64_JUMP_SLOT     0000000000012340 _ZNSt8__detail9_CompilerIE7_M_atomEv + 0
"""


def test_the_check_names_a_defined_function_called_through_the_plt():
    # The listing of a library linked without -Bsymbolic-functions: its own weak std::regex
    # instantiation is called through a PLT slot, which torch's copy can take over.
    assert defined_functions(SYMS) == {"_ZNSt8__detail9_CompilerIE7_M_atomEv"}
    assert plt_symbols(RELOCS) & defined_functions(SYMS) == {"_ZNSt8__detail9_CompilerIE7_M_atomEv"}


def crossdev_libraries():
    found = sorted((BUILD_DIR / "lib").glob("libcrossdev_*.so")) + sorted((BUILD_DIR / "python").rglob("_crossdev*.so"))
    return found


@pytest.mark.parametrize("library", crossdev_libraries(), ids=lambda p: p.name)
def test_crossdev_libraries_bind_their_own_functions(library):
    calls = interposable_calls(library)
    assert not calls, (f"{library.name} calls {len(calls)} function(s) it defines through its PLT, e.g. {calls[:3]}: "
                       "link it with -Bsymbolic-functions (cmake/CrossdevLinking.cmake)")


def test_the_built_libraries_are_found():
    names = {p.name for p in crossdev_libraries()}
    assert {"libcrossdev_core.so", "libcrossdev_ops.so", "libcrossdev_manager.so"} <= names, names
