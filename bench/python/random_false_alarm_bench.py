"""The false-alarm rate of the opinfo suite's distribution test (python/crossdev/opinfo/random_ops.py).

Clean reruns: both sides run the same, correct random op, each from its own seed stream (as a device's
generator draws other numbers than the CPU's), so every rejection is a false alarm. Each rerun is one
case's test: random_ops.DRAWS draws a side, the three features, the Bonferroni-split KS test and the
tolerance on the quartiles, exactly as the suite calls it. The documented bound is random_ops.ALPHA per
case (docs/opinfo.md, "Random ops"); this measures it. Not part of make test (minutes):

    python bench/python/random_false_alarm_bench.py --reruns 1000 --out false_alarms.json
"""
import argparse
import json
import pathlib
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from crossdev.opinfo import random_ops  # noqa: E402

torch.manual_seed(0)
X2 = torch.randn(2, 4, 6, 6)
X1 = torch.randn(64)
OPS = {  # (what it draws from, the call); float32 defaults rtol 1.3e-6, atol 1e-5
    "dropout (bernoulli_)": lambda: F.dropout(X1, p=0.5, training=True),
    "dropout2d (bernoulli_ per channel)": lambda: F.dropout2d(X2, p=0.3, training=True),
    "fractional_max_pool2d (rand)": lambda: F.fractional_max_pool2d(X2, kernel_size=2, output_ratio=(0.5, 0.5)),
    "rrelu (uniform_)": lambda: F.rrelu(X1, training=True),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=1000)
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--ops", nargs="*", choices=list(OPS), help="a subset of the ops (default: all)")
    args = parser.parse_args(argv)
    results = {}
    for name, call in OPS.items():
        if args.ops and name not in args.ops:
            continue
        started, alarms = time.perf_counter(), 0
        for k in range(args.reruns):
            a = random_ops.draw_features(call, lambda s: torch.manual_seed(s + 2 * k * random_ops.DRAWS))
            b = random_ops.draw_features(call, lambda s: torch.manual_seed(10**7 + s + 2 * k * random_ops.DRAWS))
            alarms += bool(random_ops.compare_distributions(a, b, 1.3e-6, 1e-5))
        results[name] = {"reruns": args.reruns, "false_alarms": alarms, "rate": alarms / args.reruns,
                         "seconds": round(time.perf_counter() - started, 1)}
        print(f"{name}: {alarms} false alarms in {args.reruns} clean reruns ({results[name]['seconds']} s)")
    total = sum(r["false_alarms"] for r in results.values())
    runs = sum(r["reruns"] for r in results.values())
    print(f"all: {total} in {runs} (bound per case: {random_ops.ALPHA:g})")
    if args.out:
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps({"draws": random_ops.DRAWS, "alpha": random_ops.ALPHA, "ops": results}, indent=1))
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
