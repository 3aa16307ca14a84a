"""`python -m crossdev.models FACTORY --device sim [...]`: compare_model from the shell.

Prints a report line per device (with --json, one JSON object: the results' to_dict()), and the
error along the depth for each failing device. Exit 0 when every device passes, 1 when one fails or
errs, 2 for bad input (a factory that does not import, raises or returns the wrong thing).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from crossdev import dtypes, python_suites
from crossdev.numerics import DEFAULT_MODE, MODES

# torch-free, for the options: the models suite's record (python_suites.json) and the dtype table
DTYPES = dtypes.FLOATING_NAMES
CHECKS = python_suites.choices("models", "checks")
DEFAULT_CHECKS = python_suites.default("models", "checks")
SEED_POLICIES = python_suites.choices("models", "seed_policy")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crossdev.models", description=__doc__.splitlines()[0])
    parser.add_argument("factory", help="module:callable returning (model, inputs), e.g. crossdev_examples.dit:tiny_dit_block")
    parser.add_argument("--device", action="append", required=True, help="a device to compare with the CPU (repeatable): sim, cuda, ...")
    parser.add_argument("--dtype", action="append", choices=DTYPES, help="float32 (default) or another (repeatable)")
    parser.add_argument("--check", action="append", choices=CHECKS,
                        help=f"{', '.join(CHECKS)} (default: {', '.join(DEFAULT_CHECKS)}; repeatable)")
    parser.add_argument("--steps", type=int, help="optimizer steps of the train check (default: the factory's, else 5)")
    parser.add_argument("--seed-policy", choices=SEED_POLICIES,
                        help="a random forward (dropout in train mode): none refuses it, same_mask replays the CPU's masks")
    parser.add_argument("--recover", action="store_true",
                        help="apply a classified device error's recovery to the op that raised and run again")
    parser.add_argument("--import-path", action="append", default=[], metavar="DIR", help="put DIR first on sys.path (repeatable)")
    parser.add_argument("--load-library", action="append", default=[], metavar="PATH",
                        help="torch.ops.load_library(PATH) first, e.g. kernels registered for a device (repeatable)")
    parser.add_argument("--numerics", choices=MODES, default=DEFAULT_MODE,
                        help="parity: TF32 off for each device run; deployed: the process's switches as they are")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)

    import torch

    from . import FactoryError, compare_model
    sys.path[:0] = args.import_path
    if any(d.split(":")[0] == "sim" for d in args.device):
        import crossdev
        crossdev.sim.register()  # before any library registers kernels for it and before autograd starts
    for path in args.load_library:
        try:
            torch.ops.load_library(path)
        except OSError as e:
            print(f"crossdev.models: --load-library {path}: {e}", file=sys.stderr)
            return 2
    try:
        result = compare_model(args.factory, devices=args.device, dtypes=args.dtype or ["float32"],
                               checks=args.check or list(DEFAULT_CHECKS), steps=args.steps,
                               seed_policy=args.seed_policy, recover=args.recover, numerics_mode=args.numerics)
    except (FactoryError, ValueError) as e:
        print(f"crossdev.models: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"model": result.model, "results": [r.to_dict() for r in result]}))
    else:
        print(result)
        for r in result:
            if r.status == "fail" and r.layers:
                print(f"\n{r.device} {r.dtype}, error along the depth:\n{r.depth_table()}")
    return 0 if result.passed else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip the interpreter's teardown: LibTorch aborts at exit ("terminate called without an active
    # exception") in a process whose first backward ran on the sim device; the answer is already out.
    os._exit(code)
