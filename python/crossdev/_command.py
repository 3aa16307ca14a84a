"""What every Python subcommand of `crossdev` shares: its exit codes and their two guards.

- ArgumentParser: bad usage is bad input, exit 2, with the usage line (argparse's own message kept).
- guarded(run, prog, component): run(argv) as a command line, where an unexpected exception (a bug)
  exits 2 with the end of its traceback, never with a traceback's exit 1, which would read as a verdict.
Stdlib only: these commands import neither torch nor the compiled core.
"""
from __future__ import annotations

import argparse
import sys
import traceback
from typing import Callable, List, Optional

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def guarded(run: Callable[[Optional[List[str]]], int], prog: str, component: str):
    """main(argv) for run(argv); tests call run() itself and see any bug."""

    def main(argv: Optional[List[str]] = None) -> int:
        try:
            return run(argv)
        except Exception:  # noqa: BLE001
            print(f"{prog}: internal error (a bug in {component}: please report it with the input bundles):\n"
                  + traceback.format_exc(limit=-3), file=sys.stderr)
            return EXIT_BAD_INPUT

    main.__doc__ = "The command line: run(), and an unexpected exception exits 2, never a traceback's exit 1."
    return main
