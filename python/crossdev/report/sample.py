"""Synthetic, schema-valid bundles for tests and demos (python -m crossdev.report.sample DIR).

Real bundles come from `crossdev run`; these add what a CPU-only box cannot produce (CUDA/MPS
runners, benchmark JSON) so every view and the gate can be exercised. Tests vary the cases
they pass in; the summary is always computed from the cases, as the C++ writer does.
"""
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from crossdev.report.schema import EXECUTIONS, GATING_STATUSES, SCHEMA_NAME, STATUSES


def case(case_id: str, suite: str, status: str = "pass", execution: str = "real", device: str = "cpu",
         message: str = "", metrics: Optional[Dict[str, float]] = None, details: Optional[Dict[str, str]] = None,
         line: int = 1) -> dict:
    return {
        "id": case_id, "row_id": case_id.split("/")[0], "suite": suite, "source": f"sample {suite} row",
        "intent": "", "file": f"matrices/{suite}.yaml", "line": line, "status": status, "device": device,
        "execution": execution, "simulated": execution == "simulated", "message": message, "duration_s": 0.001,
        "metrics": metrics or {}, "details": details or {},
    }


def ops_case(op: str, kind: str, dtype: str, impl: str, status: str = "pass", execution: str = "real",
             max_abs: float = 1e-7, max_ulp: float = 1.0, shape_set: str = "small", digest: str = "") -> dict:
    summary = f"close: 64 elements, max_abs={max_abs:g}, max_rel={max_abs:g}, max_ulp={max_ulp:g} (rtol=1e-05, atol=1e-05)"
    details = {"op": op, "impl": impl, "dtype": dtype, "shape_set": shape_set, "golden out": summary}
    if kind != "cpu":
        details["vs_cpu out"] = summary
    if digest:
        details["output_digest"] = digest
    return case(f"{op}.row/{kind}/{dtype}/{shape_set}/{impl}", "ops", status, execution,
                device=f"{kind}:0" if kind != "cpu" else "cpu",
                message="" if status == "pass" else f"{op} {impl} {dtype}: values not close",
                metrics={"max_abs": max_abs, "max_rel": max_abs, "max_ulp": max_ulp, "mismatches": 0},
                details=details)


def opinfo_case(op: str, kind: str, dtype: str, check: str, status: str = "pass", execution: str = "real",
                failing_samples: str = "") -> dict:
    """A case of the OpInfo suite as the worker records it (python/crossdev/opinfo/suite.py)."""
    details = {"op": op, "device_kind": kind, "dtype": dtype, "check": check}
    if status in ("fail", "xfail"):
        details["failing_samples"] = failing_samples or "sample 0 shapes [(5, 5)]: Mismatched elements: 1 / 25"
    message = {"fail": "1 of 1 samples differ from the CPU",
               "xfail": "expected failure (sample expectation): 1 of 1 samples differ from the CPU"}.get(status, "")
    return case(f"opinfo.sample/{op}/{kind}/{dtype}/{check}", "opinfo", status=status, execution=execution,
                device="sim:0" if execution == "simulated" else f"{kind}:0", message=message, details=details)


# The tiny DiT block's module calls in execution order (crossdev_examples.dit): (path, parent call).
DIT_CALLS = [("(model)", None), ("adaln", 0), ("norm1", 0), ("attn", 0), ("attn.qkv", 3), ("attn.proj", 3),
             ("attn_residual", 0), ("norm2", 0), ("mlp", 0), ("mlp.fc1", 8), ("mlp.act", 8), ("mlp.fc2", 8),
             ("mlp_residual", 0)]


# The tiny LLaMA's (crossdev_examples.llama, one block shown).
LLAMA_CALLS = [("(model)", None), ("embed", 0), ("layers.0", 0), ("layers.0.attn_norm", 2), ("layers.0.attn", 2),
               ("layers.0.mlp_norm", 2), ("layers.0.mlp", 2), ("norm", 0), ("head", 0)]


def depth_layers(calls=DIT_CALLS, culprit: str = "", rounding: float = 2e-7, wrong: float = 2.3e-3) -> List[dict]:
    """A case's data.layers along the depth (forward): rounding error growing call by call; with a culprit,
    its own error is `wrong`, which every later call and every enclosing call inherits, and each call has
    its own (teacher-forced) error, as a localised case carries."""
    at = next((i for i, (path, _) in enumerate(calls) if path == culprit), None)
    enclosing, parent = set(), calls[at][1] if at is not None else None
    while parent is not None:
        enclosing.add(parent)
        parent = calls[parent][1]
    layers = []
    for i, (path, parent) in enumerate(calls):
        inherited = rounding * (1 + i) if at is None or (i < at and i not in enclosing) else wrong * (1 + 0.1 * i)
        limit = 1e-5 + 1.3e-6 * (1 + 0.3 * i)
        own = None if at is None else (wrong if i == at or i in enclosing else 0.0 if i % 3 else rounding)
        layers.append({"module": path, "call": i, "parent": parent, "phase": "forward", "inherited": inherited,
                       "inherited_passed": inherited <= limit, "own": own,
                       "own_passed": None if own is None else own <= limit, "limit": limit})
    return layers


def models_case(row: str, kind: str, dtype: str, status: str = "pass", execution: str = "real",
                culprit: str = "", losses: Optional[Dict[str, List[float]]] = None, checks=("forward", "backward"),
                calls=DIT_CALLS) -> dict:
    """A case of the models suite as the worker records it (python/crossdev/models/suite.py): details, metrics
    and the structured `data` (the error along the depth; for train the losses per step)."""
    layers = depth_layers(calls, culprit=culprit)
    details = {"model": f"crossdev_examples.{row.split('.')[-1]}", "device_kind": kind, "dtype": dtype}
    data = {"layers": layers}
    message = "; ".join(f"{c}: agree" for c in checks)
    if culprit:
        details.update(first_divergence=culprit, first_divergence_op="aten::gelu", first_divergence_phase="forward",
                       first_divergence_detail="own error max_abs 0.0023: out of tolerance")
        data["first_divergence_call"] = next(p["call"] for p in layers if p["module"] == culprit)
        message = f"forward: 1/1 outputs differ; first divergence: {culprit} at aten::gelu (forward)"
        if status == "xfail":
            message = "expected failure (a known gelu bug on this device): " + message
    metrics = {f"{c}_compared": 1.0 for c in checks}
    metrics["forward_max_abs"] = max(p["inherited"] for p in layers)
    if losses:
        data["losses"] = losses
        metrics["train_max_abs"] = max(abs(a - b) for a, b in zip(losses["device"], losses["golden"]))
    return case(f"models.{row}/{kind}/{dtype}", "models", status=status, execution=execution,
                device="sim:0" if execution == "simulated" else f"{kind}:0", message=message, metrics=metrics,
                details=details) | {"data": data}


def loss_curves(steps: int = 5, drift: float = 0.0) -> Dict[str, List[float]]:
    golden = [4.2 * 0.93 ** i for i in range(steps + 1)]
    return {"golden": golden, "float64": [v + 1e-7 * i for i, v in enumerate(golden)],
            "device": [v * (1 + drift * i) + 3e-7 * i for i, v in enumerate(golden)]}


def _counts(cases: List[dict]) -> dict:
    counted = Counter(c["status"] for c in cases) + Counter(c["execution"] for c in cases)
    out = {"total": len(cases)}
    out.update({k: counted.get(k, 0) for k in STATUSES + EXECUTIONS})
    out["gates"] = any(c["status"] in GATING_STATUSES for c in cases)
    return out


def bundle(device_kind: str, cases: List[dict], host: str = "runner-1", simulated: bool = False,
           simulate_spec: str = "", created: str = "2026-01-01T00:00:00Z", benchmarks: Optional[dict] = None) -> dict:
    # Like the writer: the target's kind is real; each kind of the simulate spec the host lacks is simulated.
    devices = [{"kind": device_kind, "count": 1, "provenance": "real", "names": [f"{device_kind}:0"]}]
    if simulated:
        for item in (simulate_spec or "cuda").split(","):
            kind, _, count = item.strip().partition(":")
            if kind and kind != device_kind and kind not in {d["kind"] for d in devices}:
                devices.append({"kind": kind, "count": int(count or 1), "provenance": "simulated",
                                "names": [f"simulated {kind}:{i}" for i in range(int(count or 1))]})
    by_suite: Dict[str, List[dict]] = {}
    for c in cases:
        by_suite.setdefault(c["suite"], []).append(c)
    return {
        "schema": SCHEMA_NAME, "schema_version": 3, "created_utc": created,
        "tool": {"name": "crossdev", "version": "0.1.0"},
        "execution_target": {
            "device_kind": device_kind, "device_model": f"sample {device_kind} device", "driver": "",
            "libtorch_version": "2.13.0", "cuda_version": "12.8" if device_kind == "cuda" else "",
            "compiler": "gcc 12.2.0", "git_commit": "0123456789abcdef0123456789abcdef01234567", "host": host,
            "simulated": simulated, "simulate_spec": simulate_spec,
            "devices": devices,
        },
        "matrices": sorted({c["file"] for c in cases}),
        "summary": _counts(cases),
        "summary_by_suite": {s: _counts(cs) for s, cs in sorted(by_suite.items())},
        "cases": cases,
        "benchmarks": benchmarks,
        "device_log": None,
    }


def bench_json(device: str, entries: Dict[str, float], bw_util: Optional[Dict[str, float]] = None) -> dict:
    """Google Benchmark JSON: entries maps "op/impl/dtype/size" to ns per iteration."""
    benchmarks = []
    for stem, ns in entries.items():
        item = {"name": f"{stem}/{device}/fwd", "run_name": f"{stem}/{device}/fwd", "run_type": "iteration",
                "iterations": 100, "real_time": ns, "cpu_time": ns, "time_unit": "ns"}
        if bw_util and stem in bw_util:
            item["bw_util"] = bw_util[stem]
            item["bytes_per_second"] = bw_util[stem] * 50e9
        benchmarks.append(item)
    return {"context": {"host_name": "sample"}, "benchmarks": benchmarks}


# Relative cost of each impl in sweep_bench (fused.out the fastest), and of a pass.
_SWEEP_IMPL_COST = {"fused.out": 1.0, "fused": 1.1, "aten.out": 1.5, "aten": 1.7, "compile": 1.3, "torchscript": 2.5,
                    "fallback": 3.0}
_SWEEP_PASS_COST = {"fwd": 1.0, "fwd_bwd": 3.0}


def sweep_bench(ops: List[str], sweep_sizes: List[Tuple[int, str]], peer_sizes: List[Tuple[int, str]],
                sweep_impls=("fused.out", "fused", "aten.out", "aten"),
                peer_impls=("fused", "fallback", "aten", "compile", "torchscript"), repetitions: int = 5,
                jitter: float = 0.01, slow: Optional[Dict[str, float]] = None) -> dict:
    """Google Benchmark JSON shaped like make report's: every op at every sweep size (fwd, `sweep_impls`) and at
    the peer sizes (fwd and fwd_bwd, `peer_impls`), the STREAM triad at every sweep size; each benchmark
    `repetitions` iterations spread by +-`jitter` steps around a smooth time model, plus its median aggregate.
    `slow` multiplies an op's every time (a mutant). Entries come in name order, so sizes arrive in text order
    (16K before 1K), as a reader must not show them."""
    slow = slow or {}
    rows = [("stream_triad", "aten.out", size, "fwd", 1.0) for size in sweep_sizes]
    rows += [(op, impl, size, "fwd", slow.get(op, 1.0)) for op in ops for size in sweep_sizes for impl in sweep_impls]
    rows += [(op, impl, size, p, slow.get(op, 1.0)) for op in ops for size in peer_sizes for impl in peer_impls
             for p in _SWEEP_PASS_COST]
    by_name: Dict[str, List[dict]] = {}
    for op, impl, (elements, label), pass_, factor in rows:
        name = f"{op}/{impl}/float32/{label}/cpu/{pass_}"
        if name in by_name:
            continue
        bytes_per_call = 12.0 * elements * _SWEEP_PASS_COST[pass_]
        base_us = (0.5 + bytes_per_call / 20e3 * _SWEEP_IMPL_COST.get(impl, 2.0)) * factor
        times = [base_us * (1 + jitter * (k - repetitions // 2)) for k in range(repetitions)]
        entries = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": repetitions,
                    "repetition_index": i, "iterations": 100, "real_time": t, "cpu_time": t, "time_unit": "us",
                    "bytes_per_call": bytes_per_call, "bytes_per_second": bytes_per_call / (t * 1e-6),
                    "label": "real cpu"} for i, t in enumerate(times)]
        median = sorted(times)[repetitions // 2]
        entries.append(dict(entries[0], name=f"{name}_median", run_type="aggregate", aggregate_name="median",
                            real_time=median, cpu_time=median, bytes_per_second=bytes_per_call / (median * 1e-6)))
        by_name[name] = entries
    return {"context": {"host_name": "sample", "crossdev_execution": "real"},
            "benchmarks": [e for name in sorted(by_name) for e in by_name[name]]}


def demo_bundles() -> Dict[str, dict]:
    """A CPU runner (real), a CUDA runner (real) and a simulated MPS runner: every view has data."""
    ops = [("rms_norm", "float32"), ("gelu_tanh", "bfloat16")]
    impls = ("fused", "fallback", "torchscript")
    cpu = [ops_case(op, "cpu", dt, impl, digest=f"{op}-{dt}") for op, dt in ops for impl in impls]
    cuda = [ops_case(op, "cuda", dt, impl, max_abs=3e-7, max_ulp=2, digest=f"{op}-{dt}") for op, dt in ops
            for impl in impls]
    mps = [ops_case(op, "mps", dt, impl, execution="simulated") for op, dt in ops for impl in impls]
    redirect = [case(f"table.{req}.{host}.override-{o}", "redirect", execution="simulated",
                     device=f"hypothetical:{host}",
                     details={"trace": f"{req} -> {'cpu' if host == 'cpu-only' else 'cuda:0'} [substituted, via create] x"})
                for req in ("none", "cpu") for host in ("cuda-x1", "cpu-only") for o in ("off", "on")]
    manager = [case("manager.reset.cuda", "manager", device="cuda:0"),
               case("errors.oom-recovery", "errors", status="xfail", message="known: allocator does not shrink")]
    # The demo gates PASS: tan's backward is a known (xfail) gap, drawn blue-grey in the heat map.
    opinfo = [opinfo_case(op, "cuda", "float32", check, status="xfail" if (op, check) == ("tan", "backward") else "pass")
              for op in ("sin", "tan") for check in ("forward", "backward")]
    # Model parity: the DiT block passes on cuda and is a known gelu divergence on the simulated mps (an
    # xfail, so the demo still gates PASS); the train row shows its loss curves.
    models_cuda = [models_case("dit_block", "cuda", "float32"),
                   models_case("llama_train", "cuda", "float32", losses=loss_curves(), checks=("forward", "train"),
                               calls=LLAMA_CALLS)]
    models_mps = [models_case("dit_block", "mps", "float32", status="xfail", execution="simulated", culprit="mlp.act"),
                  models_case("llama_train", "mps", "float32", execution="simulated", losses=loss_curves(drift=1e-6),
                              checks=("forward", "train"), calls=LLAMA_CALLS)]
    bench = bench_json("cuda", {"rms_norm/fused/float32/4096": 1000.0, "rms_norm/fallback/float32/4096": 2500.0,
                                "rms_norm/torchscript/float32/4096": 1800.0},
                       bw_util={"rms_norm/fused/float32/4096": 0.8, "rms_norm/fallback/float32/4096": 0.35})
    return {
        "cpu.json": bundle("cpu", cpu + redirect, host="linux-cpu"),
        "cuda.json": bundle("cuda", cuda + redirect + manager + opinfo + models_cuda, host="gpu-box", benchmarks=bench),
        "mps-sim.json": bundle("cpu", mps + models_mps, host="linux-cpu", simulated=True, simulate_spec="mps"),
    }


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m crossdev.report.sample DIR   (writes demo bundles into DIR)", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in demo_bundles().items():
        (out / name).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
