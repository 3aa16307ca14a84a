#!/usr/bin/env python3
"""Checks that the per-capability copies of the fused CPU kernels share no code (ops/cpu/dispatch.h).

Every <op>/fused_cpu.cpp is compiled once per instruction set (impl/ops/CMakeLists.txt), each copy
with its own -m flags. A weak symbol (an inline function, a template instantiation, a static
inline variable) that two copies both define has one name and two different bodies: the linker
keeps one of them for every caller, which breaks the one-definition rule and can run AVX512 code
on a CPU without it. Two checks:

  shared   (nm) no weak symbol (W, V, u) naming crossdev:: is defined by more than one copy's
           objects. Give it objects compiled at -O0 as well (--copy twice per capability) to see
           every inline function, not only those the optimizer left out of line.
  library  (objdump) in the linked library, every function that executes an AVX/AVX-512
           instruction (a VEX/EVEX mnemonic, a ymm/zmm or mask register) is named in an AVX2 or
           AVX512 copy's namespace (--wide-namespace): std::, c10:: and at:: inline functions
           are still compiled into every copy, and this shows the linker kept a DEFAULT one.

Usage: check_capability_symbols.py [--copy NAME=LISTFILE]... [--library LIB] [--wide-namespace NS]...
LISTFILE lists one object file per line (impl/ops/CMakeLists.txt writes them). Exit 1 on a finding.
"""
import argparse
import collections
import re
import subprocess
import sys

WEAK_TYPES = {"W", "V", "u"}
FUNCTION_HEADER = re.compile(r"^[0-9a-f]+ <(.*)>:$")
INSTRUCTION = re.compile(r"^\s+[0-9a-f]+:\t(\S+)\s*(.*)$")
WIDE_OPERAND = re.compile(r"%[yz]mm\d|%k[0-7]\b")


def weak_symbols(objects):
    """Demangled weak symbols defined by the objects."""
    out = subprocess.run(["nm", "-C", "--defined-only", *objects], capture_output=True, text=True, check=True).stdout
    symbols = set()
    for line in out.splitlines():
        parts = line.split(" ", 2)  # address, type, name
        if len(parts) == 3 and parts[1] in WEAK_TYPES:
            symbols.add(parts[2])
    return symbols


def shared_crossdev_symbols(copies):
    """{symbol: [copy names]} for crossdev symbols that more than one copy defines."""
    owners = collections.defaultdict(set)
    for name, objects in copies.items():
        for symbol in weak_symbols(objects):
            if "crossdev::" in symbol:
                owners[symbol].add(name.split("@")[0])
    return {s: sorted(o) for s, o in owners.items() if len(o) > 1}


def wide_functions(library):
    """{function: count} of functions in the library that execute AVX/AVX-512 instructions."""
    out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", library], capture_output=True, text=True,
                         check=True).stdout
    function, wide = None, collections.Counter()
    for line in out.splitlines():
        header = FUNCTION_HEADER.match(line)
        if header:
            function = header.group(1)
            continue
        insn = INSTRUCTION.match(line)
        if insn and function is not None:
            mnemonic, operands = insn.group(1), insn.group(2)
            if mnemonic.startswith("v") or WIDE_OPERAND.search(operands):
                wide[function] += 1
    return wide


def read_copies(specs):
    copies = collections.defaultdict(list)
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            sys.exit(f"--copy expects NAME=LISTFILE, got {spec!r}")
        with open(path) as f:
            objects = [line.strip() for line in f if line.strip()]
        if not objects:
            sys.exit(f"{path}: no object files listed for copy {name}")
        copies[name] += objects
    return copies


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copy", action="append", default=[],
                        help="NAME=LISTFILE: the objects of one capability's copy (NAME@TAG to add a second set)")
    parser.add_argument("--library", help="the linked library to disassemble")
    parser.add_argument("--wide-namespace", action="append", default=[],
                        help="a namespace whose functions may use AVX/AVX-512 (crossdev_avx2, crossdev_avx512)")
    args = parser.parse_args()
    failures = []

    copies = read_copies(args.copy)
    if copies:
        names = {n.split("@")[0] for n in copies}
        if len(names) < 2:
            print(f"shared: only {sorted(names)} built; nothing to compare")
        shared = shared_crossdev_symbols(copies)
        for symbol, owners in sorted(shared.items()):
            failures.append(f"shared: {symbol}  (defined by {', '.join(owners)})")
        print(f"shared: {sum(len(v) for v in copies.values())} objects of {sorted(names)}, "
              f"{len(shared)} crossdev weak symbols defined by more than one copy")

    if args.library:
        if not args.wide_namespace:
            sys.exit("--library needs at least one --wide-namespace")
        wide = wide_functions(args.library)
        outside = {f: n for f, n in wide.items() if not any(f"{ns}::" in f for ns in args.wide_namespace)}
        for function, count in sorted(outside.items()):
            failures.append(f"library: {function}  ({count} AVX/AVX-512 instructions outside {args.wide_namespace})")
        print(f"library: {len(wide)} functions use AVX/AVX-512, {len(outside)} of them outside the wide copies")

    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
