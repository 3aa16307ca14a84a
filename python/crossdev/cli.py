"""The `crossdev` command: one entry point, a table of subcommands.

    crossdev run|devices|resolve ...   the C++ engine (crossdev/bin/crossdev), exec'd in place
    crossdev report BUNDLE... --out DIR    bundles -> offline HTML, Markdown and JUnit
    crossdev merge BUNDLE... --out FILE    runners' (or shards') bundles -> one file the others read
    crossdev gate ...                      the CI verdict over bundles (xfail does not gate)
    crossdev bench-gate ...                benchmark regressions against a baseline
    crossdev diff A B                      are two runs the same apart from timings, ids and places?
    crossdev expectations accept BUNDLE... the opinfo expectation files, rewritten from runs
    crossdev repro BUNDLE CASE_ID          a standalone torch-only script that reproduces a failing case

Every subcommand has --help. Exit codes: 0 success, 1 a conformance (or gate) failure, 2 bad input.
The Python subcommands import neither torch nor the compiled core.
"""
from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2


@dataclass(frozen=True)
class Subcommand:
    name: str
    target: str   # "engine" or "module:function" taking argv and returning the exit code
    summary: str


SUBCOMMANDS = (
    Subcommand("run", "engine", "run the conformance matrices (default: the built-in catalog)"),
    Subcommand("devices", "engine", "the devices this host has (or simulates)"),
    Subcommand("resolve", "engine", "what the redirect policy does with device requests"),
    Subcommand("report", "crossdev.report.render:main", "bundles -> offline HTML, Markdown and JUnit"),
    Subcommand("merge", "crossdev.merge:main", "bundles of several runners or shards -> one file"),
    Subcommand("gate", "crossdev.gate:main", "the CI verdict over bundles (0 pass, 1 fail, 2 bad input)"),
    Subcommand("bench-gate", "crossdev.bench_gate:main", "benchmark regressions against a baseline"),
    Subcommand("diff", "crossdev.diff:main", "two runs' bundles: the same apart from timings, ids and places?"),
    Subcommand("expectations", "crossdev.expectations:main",
               "accept BUNDLE...: rewrite the opinfo expectation files from runs"),
    Subcommand("repro", "crossdev.repro:main", "BUNDLE CASE_ID: a standalone torch script for a failing case"),
)
_BY_NAME = {s.name: s for s in SUBCOMMANDS}


def usage() -> str:
    width = max(len(s.name) for s in SUBCOMMANDS)
    lines = ["usage: crossdev <command> [options]   (crossdev <command> --help for its options)", "", "commands:"]
    lines += [f"  {s.name:<{width}}  {s.summary}" for s in SUBCOMMANDS]
    lines += ["", "exit codes: 0 success, 1 conformance failure, 2 bad input"]
    return "\n".join(lines)


def run_engine(name: str, argv: list[str]) -> int:
    """exec the engine in place (same pid: signals reach it directly, its exit code is ours)."""
    from crossdev import _paths

    exe = _paths.engine_binary()
    if not exe.is_file():
        print(f"crossdev: the engine {exe} is missing: the package is incomplete (reinstall crossdev)", file=sys.stderr)
        return EXIT_BAD_INPUT
    args = [str(exe), name, *argv]
    env = _paths.engine_environment()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(str(exe), args, env)
    return EXIT_BAD_INPUT  # not reached


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return EXIT_OK if argv else EXIT_BAD_INPUT
    if argv[0] == "--version":
        from crossdev import __version__
        print(f"crossdev {__version__}")
        return EXIT_OK
    name, rest = argv[0], argv[1:]
    sub = _BY_NAME.get(name)
    if sub is None:
        print(f"crossdev: unknown command '{name}'; expected one of {', '.join(_BY_NAME)}\n\n{usage()}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if sub.target == "engine":
        return run_engine(name, rest)
    module, _, function = sub.target.partition(":")
    sys.argv[0] = f"crossdev {name}"
    code = getattr(importlib.import_module(module), function)(rest)
    return EXIT_OK if code is None else int(code)


if __name__ == "__main__":
    sys.exit(main())
