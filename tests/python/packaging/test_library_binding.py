"""crossdev's libraries bind C++ standard library code to libstdc++ or to their own copies, never to
another library's copy (cmake/CrossdevLinking.cmake).

LibTorch's pip builds export their own instantiations of std templates (std::regex's compiler and its
NFA's shared_ptr vtable in libtorch_python.so) and copies of libstdc++ functions (std::filesystem in
libtorch_cpu.so, the std::ostringstream constructor in libc10.so), and crossdev's libraries exported
copies of their own. On an H100 host (torch 2.11+cu130, GCC 13) error messages and the error
classifier crashed inside such copies and passed with libstdc++ preloaded. The CPU wheel CI uses
happens not to crash, so the binding itself is what this file checks, on every built library:
1. libstdc++ is its first DT_NEEDED entry (its references to libstdc++ are searched there first), and
   of every built executable too;
2. it exports no std:: or __gnu_cxx:: definition (crossdev_std_local.map keeps them local);
3. no PLT slot (R_X86_64_JUMP_SLOT) names a function it defines (-Bsymbolic-functions);
4. no library or executable carries its own copy of libstdc++'s runtime (a toolchain that links
   libstdc++.a by default, as that H100 image's did: two copies of std::locale's state, and a std::regex
   built in one and destroyed in the other freed a pointer the other never allocated).
Each check is first shown to fail on a listing of a binary linked without its rule.
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


# Mangled-name prefixes of the std and __gnu_cxx namespaces (functions, vtables, typeinfo, local statics):
# the patterns of cmake/crossdev_std_local.map.
STD_SYMBOL = re.compile(r"^_Z(?:N?K?S[tsaiod]|T[VISTC]N?St|GVZN?K?St|ZN?K?St|NK?9__gnu_cxx)")


def exported_std_definitions(dyn_syms):
    """Names of the std/__gnu_cxx symbols a `readelf -W --dyn-syms` listing defines (any type, Ndx not UND)."""
    names = set()
    for line in dyn_syms.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[6] != "UND" and f[4] != "LOCAL" and STD_SYMBOL.match(f[7]):
            names.add(f[7].split("@")[0])
    return names


def needed(dynamic):
    """The DT_NEEDED entries of a `readelf -d` listing, in order."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


EXPORTING_SYMS = """
Symbol table '.dynsym' contains 4 entries:
   Num:    Value          Size Type    Bind   Vis      Ndx Name
     1: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND _ZNSo9_M_insertIlEERSoT_@GLIBCXX_3.4.9 (3)
     2: 0000000000012340    64 FUNC    WEAK   DEFAULT   14 _ZNKSt5ctypeIcE8do_widenEc
     3: 0000000000012400    32 OBJECT  WEAK   DEFAULT   23 _ZTVNSt7__cxx1115basic_stringbufIcSt11char_traitsIcESaIcEEE
     4: 0000000000012500    16 FUNC    GLOBAL DEFAULT   14 _ZN8crossdev3ops4callERKSt6vectorIiSaIiEE
"""
TORCH_FIRST = """
 0x0000000000000001 (NEEDED)             Shared library: [libtorch_cpu.so]
 0x0000000000000001 (NEEDED)             Shared library: [libc10.so]
 0x0000000000000001 (NEEDED)             Shared library: [libstdc++.so.6]
"""


def test_the_checks_name_exported_std_code_and_libstdcxx_after_torch():
    # A library linked without the version script exports its copies of std code (a function and a
    # vtable); its own function taking a std::vector is not std code. Without the -lstdc++ up front,
    # libstdc++ comes after torch's libraries.
    assert exported_std_definitions(EXPORTING_SYMS) == {
        "_ZNKSt5ctypeIcE8do_widenEc", "_ZTVNSt7__cxx1115basic_stringbufIcSt11char_traitsIcESaIcEEE"}
    assert needed(TORCH_FIRST)[0] == "libtorch_cpu.so"


def crossdev_libraries():
    found = sorted((BUILD_DIR / "lib").glob("libcrossdev_*.so")) + sorted((BUILD_DIR / "python").rglob("_crossdev*.so"))
    return found


def crossdev_executables():
    """The ELF executables of the build (the engine, the gtest and benchmark binaries)."""
    def is_elf(path):
        try:
            with open(path, "rb") as f:
                return f.read(4) == b"\x7fELF"
        except OSError:
            return False
    return sorted(p for p in (BUILD_DIR / "bin").glob("*") if p.is_file() and is_elf(p))


# Definitions only libstdc++ itself has (not templates, not inline): std::locale's implementation, the
# iostreams' initialiser, the terminate handler. A binary that defines one holds a copy of libstdc++'s
# runtime, linked from libstdc++.a.
LIBSTDCXX_RUNTIME = frozenset({"_ZNSt6locale5_ImplD1Ev", "_ZNSt6locale5_ImplD2Ev", "_ZNSt8ios_base4InitC1Ev",
                               "_ZNSt8ios_base4InitC2Ev", "_ZN10__cxxabiv119__terminate_handlerE"})


def libstdcxx_runtime_definitions(symbols):
    """The LIBSTDCXX_RUNTIME names a `readelf -W -s` listing (.dynsym and .symtab) defines, local ones too."""
    names = set()
    for line in symbols.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[6] != "UND" and f[7].split("@")[0] in LIBSTDCXX_RUNTIME:
            names.add(f[7].split("@")[0])
    return names


STATIC_RUNTIME_SYMS = """
Symbol table '.symtab' contains 4 entries:
   Num:    Value          Size Type    Bind   Vis      Ndx Name
     1: 00000000001c5a50   120 FUNC    LOCAL  DEFAULT   14 _ZNSt6locale5_ImplD2Ev
     2: 00000000001305b0     8 OBJECT  GLOBAL DEFAULT   25 _ZN10__cxxabiv119__terminate_handlerE
     3: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND _ZNSt8ios_base4InitC1Ev@GLIBCXX_3.4 (2)
     4: 0000000000012500    16 FUNC    GLOBAL DEFAULT   14 _ZN8crossdev3ops4callEv
"""


def test_the_check_names_a_copy_of_the_libstdcxx_runtime():
    # A library linked with libstdc++.a: std::locale's destructor (local, kept by the version script) and the
    # terminate handler are its own; a reference to the iostreams' initialiser (UND) is not a copy.
    assert libstdcxx_runtime_definitions(STATIC_RUNTIME_SYMS) == {
        "_ZNSt6locale5_ImplD2Ev", "_ZN10__cxxabiv119__terminate_handlerE"}


@pytest.mark.parametrize("library", crossdev_libraries(), ids=lambda p: p.name)
def test_crossdev_libraries_bind_their_own_functions(library):
    calls = interposable_calls(library)
    assert not calls, (f"{library.name} calls {len(calls)} function(s) it defines through its PLT, e.g. {calls[:3]}: "
                       "link it with -Bsymbolic-functions (cmake/CrossdevLinking.cmake)")


def test_the_built_libraries_are_found():
    names = {p.name for p in crossdev_libraries()}
    assert {"libcrossdev_core.so", "libcrossdev_ops.so", "libcrossdev_manager.so"} <= names, names


def test_the_built_executables_are_found():
    assert {"crossdev", "crossdev_manager_tests"} <= {p.name for p in crossdev_executables()}


@pytest.mark.parametrize("binary", crossdev_libraries() + crossdev_executables(), ids=lambda p: p.name)
def test_crossdev_binaries_need_the_shared_libstdcxx_first(binary):
    dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    entries = needed(dynamic)
    assert entries and entries[0].startswith("libstdc++.so"), (
        f"{binary.name} needs {entries[:4]} first: the shared libstdc++ must come first (cmake/CrossdevLinking.cmake)")


@pytest.mark.parametrize("binary", crossdev_libraries() + crossdev_executables(), ids=lambda p: p.name)
def test_crossdev_binaries_carry_no_copy_of_the_libstdcxx_runtime(binary):
    symbols = subprocess.run(["readelf", "-W", "-s", str(binary)], capture_output=True, text=True, check=True).stdout
    copies = sorted(libstdcxx_runtime_definitions(symbols))
    assert not copies, (f"{binary.name} defines {copies}: it was linked with libstdc++.a; link the shared "
                        "libstdc++ first (cmake/CrossdevLinking.cmake, CROSSDEV_SYSTEM_LIBSTDCXX)")


@pytest.mark.parametrize("library", crossdev_libraries(), ids=lambda p: p.name)
def test_crossdev_libraries_export_no_std_code(library):
    syms = subprocess.run(["readelf", "-W", "--dyn-syms", str(library)], capture_output=True, text=True,
                          check=True).stdout
    exported = sorted(exported_std_definitions(syms))
    assert not exported, (f"{library.name} exports {len(exported)} std definition(s), e.g. {exported[:3]}: "
                          "link it with cmake/crossdev_std_local.map (cmake/CrossdevLinking.cmake)")
