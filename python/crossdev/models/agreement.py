"""`python -m crossdev.models.agreement BUNDLE [--import-path DIR] [--simulated]`: the Python API against the matrix rows.

For each `suite: models` case of BUNDLE that ran on a real device, `crossdev.compare_model` is called in
this process with the row's arguments (read from the row's file: model, checks, steps, seed_policy,
recover, numerics) on that device and dtype, as a user's script would call it: no device set up by
hand first (no `import torch_xla`). Its status must be the case's: pass for pass or xpass, fail or
error for xfail (an expectation turns either into xfail), and the same otherwise. make xla runs it
in a fresh process after the matrices (ci/xla_runner.sh; docs/models.md).

Exit codes: 0 every case agrees (a line says how many were compared, none when the bundle has no
models case on a real device), 1 one disagrees, 2 bad input (no such bundle or row file)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

# The case's status -> the compare_model statuses that agree with it.
AGREES = {"pass": {"pass"}, "xpass": {"pass"}, "fail": {"fail"}, "error": {"error"}, "xfail": {"fail", "error"}}
ROW_ARGUMENTS = (("checks", "checks"), ("steps", "steps"), ("seed_policy", "seed_policy"), ("recover", "recover"),
                 ("numerics", "numerics_mode"))


def _rows(path: Path) -> dict:
    import yaml
    with open(path) as f:
        document = yaml.safe_load(f) or {}
    return {row.get("id"): row for row in document.get("cases", [])}


def cases_to_check(bundle: dict, executions=("real",)) -> list:
    return [c for c in bundle.get("cases", []) if c.get("suite") == "models" and c.get("execution") in executions
            and c.get("status") in AGREES]


def _device(case) -> str:
    """The case's device; for a simulated one, sim with the profile of the kind it stood for, activated
    as the worker activates it (worker_devices.device_for)."""
    if case["execution"] != "simulated":
        return case["device"]
    from crossdev.worker_devices import device_for
    return device_for(case["details"]["device_kind"], "simulated")[0]


def check(bundle_path: Path, executions=("real",), out=sys.stdout) -> int:
    from . import compare_model
    try:
        bundle = json.loads(bundle_path.read_text())
    except (OSError, ValueError) as e:
        print(f"crossdev.models.agreement: {bundle_path}: cannot read a bundle: {e}", file=sys.stderr)
        return 2
    cases = cases_to_check(bundle, executions)
    if not cases:
        print(f"agreement: {bundle_path} has no models case run {' or '.join(executions)}: nothing compared", file=out)
        return 0
    rows, disagreeing = {}, 0
    for case in cases:
        file = Path(case["file"])
        try:
            row = rows.setdefault(file, _rows(file))[case["row_id"]]
        except (OSError, KeyError) as e:
            print(f"crossdev.models.agreement: {file}: no row '{case['row_id']}' for case {case['id']} ({e})",
                  file=sys.stderr)
            return 2
        kwargs = {arg: row[key] for key, arg in ROW_ARGUMENTS if key in row}
        (result,) = compare_model(row["model"], devices=[_device(case)], dtypes=[case["details"]["dtype"]], **kwargs)
        agrees = result.status in AGREES[case["status"]]
        disagreeing += not agrees
        print(f"agreement: {'agrees' if agrees else 'DISAGREES'}: {case['id']}: row {case['status']}, "
              f"compare_model {result.status}" + ("" if agrees else f": {result.message}"), file=out)
    print(f"agreement: {len(cases) - disagreeing} of {len(cases)} models cases ({' or '.join(executions)}) agree",
          file=out)
    return 1 if disagreeing else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crossdev.models.agreement", description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--import-path", action="append", default=[], metavar="DIR",
                        help="a directory the factories are found in (as crossdev run --import)")
    parser.add_argument("--simulated", action="store_true",
                        help="the simulated cases too, on sim with the profile of their kind (crossdev's own tests)")
    args = parser.parse_args(argv)
    sys.path[:0] = args.import_path
    if args.simulated:
        import crossdev
        crossdev.sim.register()  # before autograd's first backward sizes its device queues
    return check(args.bundle, ("real", "simulated") if args.simulated else ("real",))


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # as python -m crossdev.models: a runtime's teardown cannot change the answer
