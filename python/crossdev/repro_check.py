"""`python -m crossdev.repro_check BUNDLE [--keep DIR]`: the scripts of `crossdev repro` against the cases
they come from (docs/repro.md, "Checked on the real device").

For each opinfo case of BUNDLE that ran on a real device and is a genuine wrong result (`fail`, or `xfail`
under an expectation of class `numerics`), the case's script is written and run twice in a fresh Python, from
a folder outside the repository, with `crossdev` and op_db made unimportable (their sys.modules entries set to
None, so the script proves it needs torch and the device's package only): on the case's device it must exit 1
(the difference reproduces) and with `--device cpu` it must exit 0 (the script is sound). make xla runs it on
the real xla (ci/xla_runner.sh), so every numerics entry of matrices/xla/expectations/opinfo/xla.yaml that the
run reaches comes with a script that is known to reproduce it.

Exit codes: 0 every script agrees with its case (a line says how many were checked; none when the bundle has
no such case), 1 one does not (or no script could be written for it), 2 bad input (no such bundle)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from . import repro

# the script with crossdev and op_db unimportable, run as __main__ with the arguments after it
ISOLATED = """import runpy, sys
for name in ("crossdev", "torch.testing._internal.common_methods_invocations", "torch.testing._internal.opinfo"):
    sys.modules[name] = None
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""
TIMEOUT_S = 600


def cases_to_check(bundle: dict) -> list:
    return [c for c in bundle.get("cases", []) if c.get("suite", "opinfo") == "opinfo" and c.get("execution") == "real"
            and (c.get("status") == "fail" or (c.get("status") == "xfail"
                                               and (c.get("details") or {}).get("expected_class") == "numerics"))]


def run_script(script: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        return subprocess.run([sys.executable, "-I", "-c", ISOLATED, str(script), *args], capture_output=True,
                              text=True, env=env, cwd=script.parent, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(e.cmd, -1, str(e.stdout or ""), f"timed out after {TIMEOUT_S} s")


def _last_line(proc) -> str:
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return lines[-1][:200] if lines else "(no output)"


def check(bundle_path: Path, keep: Path | None = None, out=sys.stdout) -> int:
    try:
        bundle = json.loads(bundle_path.read_text())
    except (OSError, ValueError) as e:
        print(f"crossdev.repro_check: {bundle_path}: cannot read a bundle: {e}", file=sys.stderr)
        return 2
    cases = cases_to_check(bundle)
    if not cases:
        print(f"repro_check: {bundle_path} has no failing or numerics opinfo case on a real device: nothing checked",
              file=out)
        return 0
    disagreeing = 0
    with tempfile.TemporaryDirectory(prefix="crossdev-repro-") as tmp:
        for case in cases:
            folder = (keep or Path(tmp)) / case["id"].replace("/", "_")
            try:
                script = repro.write(str(bundle_path), case["id"], str(folder), None)
            except repro.BadInput as e:
                disagreeing += 1
                print(f"  no script  {case['id']}: {e}", file=out)
                continue
            device, cpu = run_script(script), run_script(script, "--device", "cpu")
            agrees = device.returncode == 1 and cpu.returncode == 0
            disagreeing += not agrees
            print(f"  {'reproduces' if agrees else 'DISAGREES '} {case['id']}: on the device exit {device.returncode} "
                  f"({_last_line(device)}), on the CPU exit {cpu.returncode} ({_last_line(cpu)})", file=out)
    print(f"repro_check: {len(cases) - disagreeing} of {len(cases)} script(s) reproduce their case "
          "(exit 1 on the device, 0 on the CPU, crossdev and op_db unimportable)", file=out)
    return 1 if disagreeing else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crossdev.repro_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--keep", type=Path, default=None, help="write the scripts under this folder and keep them")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    return check(args.bundle, args.keep)


if __name__ == "__main__":
    sys.exit(main())
