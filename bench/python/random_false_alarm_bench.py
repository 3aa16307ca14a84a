"""False alarms and power of the opinfo suite's judgement of random ops by their law (random_laws.py).

For each random op op_db has whose ATen op has a law (plus native_dropout, which CUDA's dropout reaches),
one representative call on the CPU (op_db's parameters, or close) is recorded under random_laws.RandomCalls
and judged as the suite judges a case (random_laws.judge_case: the law of every distinct recorded call, two
draws of DRAW_VALUES values, ALPHA per case). Each rerun reseeds the CPU generator.

- clean reruns: PyTorch's own CPU kernels, which follow their laws: every failure is a false alarm. The
  documented bound is ALPHA (1e-4) per case; the target 1e-3.
- mutant reruns: one parameter of the law is 10% off, simulated by a dispatch mode under the recorder that
  rewrites the ATen op's arguments (or its result, for ops without one) as a wrong kernel would, for the
  recorded call and the draws alike (uniform's from/to moved inwards by 10% of the range, normal's std x1.1
  and mean + 0.1 std, exponential's rate x1.1, bernoulli's p + 0.1 min(p, 1 - p), dropout's p x1.1, ...):
  every pass is a miss. The target: detected >= 0.99.

    python bench/python/random_false_alarm_bench.py --reruns 200 --out random_laws.json

Not part of make test. The default (--reruns 100 clean per op, --mutant-reruns 20 per parameter, --error
0.1; the suite's ALPHA and DRAW_VALUES) took 94 s (2200 clean cases, 700 mutant ones; torch 2.13 CPU, a
2-core host at load 2) with one intra-op thread (--threads, default 1: the statistics of 1e5 values gain
nothing from threads, and a loaded host crawls with two); --reruns 200 took 2.9 min (7.3 min at load 15).
Figures: random_laws.py's docstring. The JSON is written atomically (tmp, replace):
{"alpha", "draw_values", "error", "threads", "torch", "ops": {name: {"aten", "reruns", "false_alarms",
"false_alarm_rate", "first_false_alarm" (when any), "detection": {parameter: {"reruns", "detected", "rate"}},
"seconds"}}, "total": {"reruns", "false_alarms", "false_alarm_rate", "mutant_reruns", "detected",
"worst_detection_rate", "seconds"}}.
"""
import argparse
import json
import math
import pathlib
import sys
import time
import warnings

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from crossdev.opinfo import random_laws  # noqa: E402

R = random_laws


class Wrong(TorchDispatchMode):
    """A wrong kernel for the ATen ops in `packets`: `args(bound) -> changes` rewrites the arguments,
    `result(out, bound) -> out` the result."""

    def __init__(self, packets, args=None, result=None):
        super().__init__()
        self.packets, self.args, self.result = set(packets), args, result

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.overloadpacket.__name__ not in self.packets:
            return func(*args, **kwargs)
        bound = R.bind(func, args, kwargs)
        if self.args is not None:
            args, kwargs = R._replaced(func, args, kwargs, self.args(bound))
        out = func(*args, **kwargs)
        return self.result(out, bound) if self.result is not None else out


def num(v) -> float:
    return R._num(v)


def inward(lo, hi, which, e):
    """from/to (or lower/upper) with `which` moved inwards by e of the range."""
    def change(b):
        a, z = num(b[lo]), num(b[hi])
        return {lo: a + e * (z - a)} if which == lo else {hi: z - e * (z - a)}
    return change


def times(name, factor):
    return lambda b: {name: num(b[name]) * factor}


def plus_fraction_of(name, scale, e):
    return lambda b: {name: num(b[name]) + e * num(b[scale])}


def p_closer_to_half(name, e):
    """p + e min(p, 1 - p): e of p's distance to the nearer end."""
    def change(b):
        p = b[name]
        if isinstance(p, torch.Tensor):
            return {name: p + e * torch.minimum(p, 1 - p)}
        return {name: num(p) + e * min(num(p), 1 - num(p))}
    return change


def keep_of_dropout_times(factor):
    """A dropout whose drop probability is `factor` times p: bernoulli_ draws the kept mask with 1 - p."""
    return lambda b: {"p": 1 - (1 - num(b["p"])) * factor}


def result_affine(scale, shift):
    return lambda out, b: out * scale + shift


def multinomial_mass_moved(e):
    def change(b):
        p = b["self"] / b["self"].sum(-1, keepdim=True)
        moved = (1 - e) * p
        moved[..., 0] += e
        return {"self": moved}
    return change


def native_dropout_mask_p(e):
    return lambda b: {"p": num(b["p"]) * (1 + e)}


def native_dropout_rescaled(out, b):  # the mask drawn with another p, the kept values scaled as for p
    y, mask = out
    return (b["input"] * mask / (1 - num(b["p"])), mask)


def tensor_times(name, factor):
    return lambda b: {name: b[name] * factor}


def tensor_mean_plus(e):
    return lambda b: {"mean": b["mean"] + e * b["std"]}


def int_off(name, range_of, e, sign):
    """randint's low or high moved inwards by e of the range, at least 1."""
    return lambda b: {name: int(num(b[name])) + sign * max(1, math.ceil(e * range_of))}


torch.manual_seed(0)
X25 = torch.randn(5, 5)
X555 = torch.randn(5, 5, 5)
X5555 = torch.randn(5, 5, 5, 5)
X20 = torch.randn(20)
P234 = torch.rand(2, 3, 4)
PROBS = torch.rand(3, 10)
MEAN342 = torch.randn(3, 4, 2)
STD342 = torch.rand(3, 4, 2) + 0.1


def ops(e: float) -> dict:
    """op_db name -> (the call, {law parameter: the wrong kernel, e (relative) off in it})."""
    def dropout(call):
        return (call, {"p": Wrong(["bernoulli_"], keep_of_dropout_times(1 + e))})

    return {
        "cauchy": (lambda: torch.empty(5, 5).cauchy_(0, 1), {
            "median": Wrong(["cauchy_"], plus_fraction_of("median", "sigma", e)),
            "sigma": Wrong(["cauchy_"], times("sigma", 1 + e))}),
        "exponential": (lambda: torch.empty(5, 5).exponential_(1.0), {
            "lambd": Wrong(["exponential_"], times("lambd", 1 + e))}),
        "geometric": (lambda: torch.empty(5, 5).geometric_(0.5), {
            "p": Wrong(["geometric_"], p_closer_to_half("p", e))}),
        "log_normal": (lambda: torch.empty(5, 5).log_normal_(0.5, 1.0), {
            "mean": Wrong(["log_normal_"], plus_fraction_of("mean", "std", e)),
            "std": Wrong(["log_normal_"], times("std", 1 + e))}),
        "normal.in_place": (lambda: torch.empty(5, 5).normal_(0, 5), {
            "mean": Wrong(["normal_"], plus_fraction_of("mean", "std", e)),
            "std": Wrong(["normal_"], times("std", 1 + e))}),
        "uniform": (lambda: torch.empty(10).uniform_(-100, 100), {
            "from": Wrong(["uniform_"], inward("from", "to", "from", e)),
            "to": Wrong(["uniform_"], inward("from", "to", "to", e))}),
        "randn": (lambda: torch.randn(5, 5), {
            "mean": Wrong(["randn"], result=result_affine(1.0, e)),
            "std": Wrong(["randn"], result=result_affine(1 + e, 0.0))}),
        "randn_like": (lambda: torch.randn_like(X25), {
            "mean": Wrong(["randn_like"], result=result_affine(1.0, e)),
            "std": Wrong(["randn_like"], result=result_affine(1 + e, 0.0))}),
        "rand_like": (lambda: torch.rand_like(X25), {
            "from": Wrong(["rand_like"], result=result_affine(1 - e, e)),
            "to": Wrong(["rand_like"], result=result_affine(1 - e, 0.0))}),
        "randint": (lambda: torch.randint(2, 10, (5, 5)), {
            "low": Wrong(["randint"], int_off("low", 8, e, +1)),
            "high": Wrong(["randint"], int_off("high", 8, e, -1))}),
        "randint_like": (lambda: torch.randint_like(X25, 2, 10), {
            "low": Wrong(["randint_like"], int_off("low", 8, e, +1)),
            "high": Wrong(["randint_like"], int_off("high", 8, e, -1))}),
        "multinomial": (lambda: torch.multinomial(PROBS, 3), {
            "probs": Wrong(["multinomial"], multinomial_mass_moved(e))}),
        "normal": (lambda: torch.normal(MEAN342, STD342), {
            "mean": Wrong(["normal"], tensor_mean_plus(e)),
            "std": Wrong(["normal"], tensor_times("std", 1 + e))}),
        "normal.number_mean": (lambda: torch.normal(1.6, 0.3, (2, 3)), {
            "mean": Wrong(["normal"], plus_fraction_of("mean", "std", e)),
            "std": Wrong(["normal"], times("std", 1 + e))}),
        "bernoulli": (lambda: torch.bernoulli(P234), {
            "p": Wrong(["bernoulli"], p_closer_to_half("self", e))}),
        "nn.functional.dropout": dropout(lambda: F.dropout(X25, 0.5, training=True)),
        "nn.functional.dropout2d": dropout(lambda: F.dropout2d(X555, 0.5, training=True)),
        "nn.functional.dropout3d": dropout(lambda: F.dropout3d(X5555, 0.5, training=True)),
        "nn.functional.alpha_dropout": dropout(lambda: F.alpha_dropout(X25, 0.5, training=True)),
        "nn.functional.feature_alpha_dropout": dropout(lambda: F.feature_alpha_dropout(X5555, 0.5, training=True)),
        "nn.functional.rrelu": (lambda: F.rrelu(X20, 0.0, 1.0, training=True), {
            "lower": Wrong(["rrelu_with_noise"], inward("lower", "upper", "lower", e)),
            "upper": Wrong(["rrelu_with_noise"], inward("lower", "upper", "upper", e))}),
        "native_dropout (CUDA's dropout)": (lambda: torch.ops.aten.native_dropout(X25, 0.5, True), {
            "p": Wrong(["native_dropout"], native_dropout_mask_p(e), native_dropout_rescaled),
            "scale": Wrong(["native_dropout"], result=lambda out, b: (out[0] * (1 + e), out[1]))}),
    }


OPS = ops(0.1)


def one_case(call, wrong, seed: int) -> tuple:
    """(passed, the ATen ops judged, the first failure's text) of one case under `wrong` (None: correct)."""
    torch.manual_seed(seed)
    if wrong is not None:
        with wrong:
            with R.RandomCalls() as rec:
                call()
            verdicts = R.judge_case(rec.calls)
    else:
        with R.RandomCalls() as rec:
            call()
        verdicts = R.judge_case(rec.calls)
    failed = [v.text for v in verdicts if not v.passed]
    return not failed, sorted({v.op for v in verdicts}), failed[0] if failed else ""


def measure(call, mutants, reruns: int, mutant_reruns: int, seed: int) -> dict:
    started = time.perf_counter()
    alarms, aten, first_alarm = 0, [], ""
    for k in range(reruns):
        passed, aten, text = one_case(call, None, seed + k)
        if not passed:
            alarms += 1
            first_alarm = first_alarm or text
    row = {"aten": aten, "reruns": reruns, "false_alarms": alarms, "false_alarm_rate": alarms / max(1, reruns)}
    if first_alarm:
        row["first_false_alarm"] = first_alarm
    row["detection"] = {}
    for parameter, wrong in (mutants.items() if mutant_reruns else ()):
        detected = 0
        for k in range(mutant_reruns):
            passed, judged, _ = one_case(call, wrong, seed + 10**6 + k)
            detected += not passed
            row["aten"] = row["aten"] or judged
        row["detection"][parameter] = {"reruns": mutant_reruns, "detected": detected,
                                       "rate": detected / max(1, mutant_reruns)}
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=100, help="clean reruns per op (default 100)")
    parser.add_argument("--mutant-reruns", type=int, default=None,
                        help="reruns per mutated parameter (default: reruns / 5, at least 20)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    parser.add_argument("--seed", type=int, default=1_000_003)
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--error", type=float, default=0.1,
                        help="the mutants' relative error in one parameter of the law (default 0.1)")
    parser.add_argument("--ops", nargs="*", choices=list(OPS), help="a subset of the ops (default: all)")
    args = parser.parse_args(argv)
    mutant_reruns = args.mutant_reruns if args.mutant_reruns is not None else max(20, args.reruns // 5)
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", message="dropout2d: Received a 3D input")  # op_db's sample is 3-D
    results, started = {}, time.perf_counter()
    for name, (call, mutants) in ops(args.error).items():
        if args.ops and name not in args.ops:
            continue
        row = results[name] = measure(call, mutants, args.reruns, mutant_reruns, args.seed)
        detection = ", ".join(f"{p} {d['detected']}/{d['reruns']}" for p, d in row["detection"].items())
        detection = f"; {args.error:.0%} errors detected: {detection}" if detection else ""
        print(f"{name} ({', '.join(row['aten'])}): {row['false_alarms']} false alarms in {row['reruns']} clean "
              f"reruns{detection} ({row['seconds']} s)", flush=True)
    total_runs = sum(r["reruns"] for r in results.values())
    total_alarms = sum(r["false_alarms"] for r in results.values())
    mutant_runs = sum(d["reruns"] for r in results.values() for d in r["detection"].values())
    detected = sum(d["detected"] for r in results.values() for d in r["detection"].values())
    worst = min((d["rate"] for r in results.values() for d in r["detection"].values()), default=None)
    total = {"reruns": total_runs, "false_alarms": total_alarms,
             "false_alarm_rate": total_alarms / max(1, total_runs), "mutant_reruns": mutant_runs,
             "detected": detected, "worst_detection_rate": worst,
             "seconds": round(time.perf_counter() - started, 1)}
    print(f"all: {total_alarms} false alarms in {total_runs} clean cases (bound per case {R.ALPHA:g}); "
          + (f"{detected} of {mutant_runs} {args.error:.0%} errors detected (worst parameter {worst:.3f}); "
             if worst is not None else "") + f"{total['seconds']} s")
    if args.out:
        doc = {"alpha": R.ALPHA, "draw_values": R.DRAW_VALUES, "error": args.error, "threads": args.threads,
               "torch": torch.__version__,
               "ops": results, "total": total}
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1))
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
