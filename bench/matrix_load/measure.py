#!/usr/bin/env python3
"""Time and peak memory of loading a large matrix with `crossdev run` (issue 11: 280k rows,
~50 MB must load in <= 5 s and <= 1 GB). A measurement, not a test: run it by hand or in CI.

    python3 bench/matrix_load/measure.py [--build build] [--rows 280000] [--repeat 3]

It writes the matrix with gen_large_matrix.py (once, into $TMPDIR), then runs
`crossdev run --matrix BIG --filter <nothing>`: the catalog is read, parsed and every row
validated, and the run stops with exit 2 "nothing selected" before any row runs. Prints wall
time, CPU time and peak RSS of each repetition and the best.
"""
import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("CROSSDEV_BUILD_DIR", ROOT / "build"))
    ap.add_argument("--rows", type=int, default=280_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    exe = pathlib.Path(args.build) / "bin" / "crossdev"
    big = pathlib.Path(tempfile.gettempdir()) / f"crossdev-large-matrix-{args.rows}.yaml"
    if not big.exists():
        subprocess.run([sys.executable, HERE / "gen_large_matrix.py", big, "--rows", str(args.rows)], check=True)
    print(f"matrix: {big} ({big.stat().st_size / 1e6:.1f} MB, {args.rows} rows)")
    results = []
    for i in range(args.repeat):
        # One child per repetition, so RUSAGE_CHILDREN's maxrss is this run's.
        code = ("import resource, subprocess, sys, time; t = time.monotonic(); "
                "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); w = time.monotonic() - t; "
                "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
                "print(p.returncode, w, r.ru_utime + r.ru_stime, r.ru_maxrss, repr(p.stderr.strip()[-200:]))")
        out = subprocess.run([sys.executable, "-c", code, str(exe), "run", "--matrix", str(big), "--filter",
                              "__select_nothing__"], capture_output=True, text=True, check=True).stdout
        rc, wall, cpu, rss_kb, err = out.split(" ", 4)
        assert rc == "2" and "nothing selected" in err, (rc, err)
        results.append((float(wall), float(cpu), int(rss_kb) / 1024))
        print(f"  run {i + 1}: wall {float(wall):.2f} s, cpu {float(cpu):.2f} s, peak RSS {int(rss_kb) / 1024:.0f} MiB")
    wall, cpu, rss = min(results)
    print(f"best: wall {wall:.2f} s, cpu {cpu:.2f} s, peak RSS {rss:.0f} MiB (limits: 5 s, 1024 MiB)")


if __name__ == "__main__":
    main()
