"""The CPU-capability axis of an opinfo row (docs/opinfo.md, "The CPU-capability axis"): the same
samples run in worker processes under ATEN_CPU_CAPABILITY=<capability> (ATen picks its vectorised
kernels once per process, at start-up), each compared with the row's first capability, the golden.
Real on any CPU host: every case is `execution: real`.

    {..., devices: [cpu], cpu_capabilities: [default, avx2, avx512]}

The samples are generated once, here (op_db's seeded inputs themselves differ between capabilities),
and torch.save'd to a scratch file that each capability's process (crossdev.opinfo.capability_worker)
loads; each case is one job sent to every capability's process, so a crash or a hang is that case's
alone. A capability the host cannot run (the CPU lacks the instructions, or this torch build ignores
the value) makes its cases `skip` with the reason."""
from __future__ import annotations

import os
import pickle
import platform
import shutil
import subprocess
import sys
import tempfile

from crossdev import child_process

from . import open_contract, row_check
from .tolerances import tolerance_for

KEY = "cpu_capabilities"
# capability -> the torch.cpu probe that says whether this CPU has its instructions (None: every CPU).
# The names are ATEN_CPU_CAPABILITY's (aten/src/ATen/native/DispatchStub.cpp); torch reports them upper-case.
CAPABILITIES = {"default": None, "avx2": "_is_avx2_supported", "avx512": "_is_avx512_supported"}
X86 = ("x86_64", "amd64", "i686", "i386")
READY_TIMEOUT_S = 120  # a capability's process: import torch and load the samples


def row_capabilities(row) -> list:
    return list(row.get(KEY, []))


def case_kinds(row) -> list:
    """The device kinds of a capability row's cases: cpu@<capability> for every capability but the golden."""
    return [f"cpu@{c}" for c in row_capabilities(row)[1:]]


def row_problems(row) -> list:
    """[(key, message)] of a row whose `cpu_capabilities` is bad input."""
    if KEY not in row:
        return []
    caps, problems = row_capabilities(row), []
    for c in caps:
        if c not in CAPABILITIES:
            problems.append((KEY, f"unknown CPU capability '{c}'; expected one of {', '.join(CAPABILITIES)} "
                                  f"(ATEN_CPU_CAPABILITY's values)"))
    if len(caps) < 2 or len(set(caps)) != len(caps):
        problems.append((KEY, "expected two or more distinct capabilities: the first is the golden, each other "
                              "one is compared with it (e.g. [default, avx2, avx512])"))
    if list(row.get("devices", [])) != ["cpu"]:
        problems.append(("devices", "a row with cpu_capabilities compares the CPU with itself: expected devices: [cpu]"))
    if "compile" in row.get("variants", []):
        problems.append(("variants", "the compile variant is not run on the CPU-capability axis"))
    return problems


def unavailable_reason(capability: str) -> str | None:
    """Why this host cannot run `capability`, or None (torch's build is asked by the process itself)."""
    probe = CAPABILITIES[capability]
    if probe is None:
        return None
    if platform.machine().lower() not in X86:
        return f"not an x86 CPU ({platform.machine()}): no {capability}"
    import torch
    if not getattr(torch.cpu, probe)():
        return f"this CPU lacks {capability} (torch.cpu.{probe}() is False)"
    return None


def _picklable(fn):
    try:
        return pickle.dumps(fn)
    except Exception:  # noqa: BLE001  (a lambda: the capability process finds it in op_db by name)
        return None


def _job(op, name, dtype_name, check, variant, max_samples, seed):
    """One case's samples, serialised: inputs, and what both sides must share (grad_outputs, out= templates)."""
    from . import samples  # imports torch: the row check (row_check.py) must not
    import torch
    from torch.utils._pytree import tree_flatten, tree_map

    dtype = getattr(torch, dtype_name)
    detach = lambda t: t.detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t  # noqa: E731
    job = {"name": name, "variant": variant, "check": check, "samples": [], "golden_raised": 0,
           "op": _picklable(op.op), "inplace": _picklable(op.inplace_variant) if variant == "inplace" else None}
    torch.manual_seed(seed)
    for index, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=(check == "backward"))):
        if index >= max_samples:
            break
        torch.manual_seed(seed + index)
        entry = {"index": index, "input": tree_map(detach, sample.input), "args": tree_map(detach, sample.args),
                 "kwargs": tree_map(detach, sample.kwargs), "shapes": samples.shapes_of(sample)}
        if check == "backward" or variant == "out":
            try:  # the output's shapes: grad_outputs for backward, the out= tensors' template
                result = samples._call(op, sample)
            except Exception:  # noqa: BLE001  it raises here: no golden anywhere
                job["golden_raised"] += 1
                continue
            if variant == "out":
                entry["out_template"] = tree_map(lambda t: t.detach() if isinstance(t, torch.Tensor) else t, result)
            if check == "backward":
                outs = [t for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
                entry["grad_outputs"] = [torch.randn_like(t.detach()) for t in outs]
        job["samples"].append(entry)
    return job


class _Process:
    """One capability's crossdev.opinfo.capability_worker (a child_process.start): its `ready` event (torch's
    capability), then one job per line, each answered by `done`."""

    def __init__(self, capability, jobs_file, out_dir, libraries=()):
        self.capability, self.jobs_file, self.out_dir = capability, jobs_file, out_dir
        self.proc = child_process.start([sys.executable, "-m", "crossdev.opinfo.capability_worker", jobs_file, out_dir,
                                         *libraries], env=dict(os.environ, ATEN_CPU_CAPABILITY=capability),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.events = child_process.EventStream(self.proc.stdout)
        self.reported = None
        event = self.events.next(READY_TIMEOUT_S)
        if event and event["event"] == "ready":
            self.reported = str(event.get("capability"))

    def alive(self):
        return self.reported is not None and self.proc.poll() is None

    def run(self, index, timeout):
        """None when job `index` ran (its results are in out_dir), else why it did not."""
        try:
            self.proc.stdin.write(f"{index}\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return "the capability process had died"
        event = self.events.next(timeout)
        if event and event["event"] == "done" and event.get("index") == index:
            return None
        timed_out = event is None and not self.events.ended and self.proc.poll() is None  # before close() kills it
        code = self.close()
        if timed_out:
            return f"timed out after {timeout:.0f} s (case_timeout)"
        how = child_process.describe_exit(code)
        return how if code < 0 else f"{how} ({self.events.last_line!r})"

    def close(self) -> int:
        return child_process.stop(self.proc)


class Runner:
    """A capability row's cases, from `start` on: the jobs are serialised on the first case."""

    def __init__(self, request, cases, start, seed):
        self.request, self.cases, self.start, self.seed = request, cases, start, seed
        self.row = request["row"]
        self.caps = row_capabilities(self.row)
        self.golden = self.caps[0]
        self.jobs = None  # (op name, dtype, check, variant) -> job index
        self.procs, self.why_not = {}, {}

    def _prepare(self):
        from . import samples  # imports torch: the row check (row_check.py) must not
        import torch
        self.scratch = tempfile.mkdtemp(prefix="crossdev_cpu_capability_")
        jobs, self.jobs = [], {}
        for op, name, _, dtype_name, check, variant in self.cases[self.start:]:
            key = (name, dtype_name, check, variant)
            if key in self.jobs or samples.variant_missing(op, variant, check):
                continue
            self.jobs[key] = len(jobs)
            jobs.append(_job(op, name, dtype_name, check, variant, row_check.max_samples(self.row), self.seed))
        torch.save(jobs, os.path.join(self.scratch, "jobs.pt"))
        self.golden_raised = {i: job["golden_raised"] for i, job in enumerate(jobs)}
        for cap in self.caps:
            self._start(cap)

    def _start(self, cap):
        why = unavailable_reason(cap)
        if why is None:
            p = _Process(cap, os.path.join(self.scratch, "jobs.pt"), self.scratch, self.request.get("libraries", []))
            if p.reported is None:
                p.close()
                why = f"its process under ATEN_CPU_CAPABILITY={cap} did not start"
            elif p.reported.lower() != cap:
                p.close()
                why = f"this torch ignores ATEN_CPU_CAPABILITY={cap} (it dispatches to {p.reported})"
            else:
                self.procs[cap] = p
        if why:
            self.why_not[cap] = why

    def _results(self, cap, index, timeout):
        """(list of per-sample results, None) or (None, why the job did not run)."""
        import torch
        if cap in self.why_not:
            return None, self.why_not[cap]
        if not self.procs[cap].alive():
            self._start(cap)  # after a crash: a fresh process for the next case
            if cap in self.why_not:
                return None, self.why_not[cap]
        failure = self.procs[cap].run(index, timeout)
        if failure:
            return None, f"the process under ATEN_CPU_CAPABILITY={cap} {failure}"
        return torch.load(os.path.join(self.scratch, f"{cap}_{index}.pt"), weights_only=False), None

    def close(self):
        for p in self.procs.values():
            p.close()
        if self.jobs is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def run_case(self, op, name, kind, dtype_name, check, variant, case) -> dict:
        from . import samples  # imports torch: the row check (row_check.py) must not
        import torch
        cap = kind.split("@", 1)[1]
        details = case["details"]
        details.update(axis="cpu_capability", cpu_capability=cap, golden=f"cpu@{self.golden}",
                       device_kind=kind)
        case.update(device="cpu", execution="real")
        why_not = samples.variant_missing(op, variant, check) or unavailable_reason(cap) or unavailable_reason(self.golden)
        if why_not:
            case.update(status="skip", execution="not_run", message=why_not)
            return case
        if self.jobs is None:
            self._prepare()
        index = self.jobs[(name, dtype_name, check, variant)]
        timeout = float(self.row.get("case_timeout", 300))
        golden, why = self._results(self.golden, index, timeout)
        if golden is None:
            status = "crash" if "signal" in why or "timed out" in why or "died" in why else "skip"
            case.update(status=status, execution="not_run" if status == "skip" else "real",
                        message=f"golden cpu@{self.golden}: {why}")
            return case
        actual, why = self._results(cap, index, timeout)
        if actual is None:
            crashed = "signal" in why or "timed out" in why or "died" in why
            case.update(status="crash" if crashed else "skip", execution="real" if crashed else "not_run", message=why)
            return case
        return self._compare(op, name, dtype_name, index, golden, actual, case, getattr(torch, dtype_name))

    def _compare(self, op, name, dtype_name, index, golden, actual, case, dtype):
        from . import samples  # imports torch: the row check (row_check.py) must not
        tol = tolerance_for(op, "cpu", dtype)
        metadata_only = open_contract.metadata_only_reason(op, name)
        case["details"].update(tolerance=f"rtol={tol.rtol:g}, atol={tol.atol:g}", tolerance_source=tol.source)
        if metadata_only:
            case["details"]["compared"] = "shape, dtype and layout only: " + metadata_only
        compared, golden_raised, failing, bitwise = 0, self.golden_raised[index], [], 0
        worst = samples.Outcome()
        for g, a in zip(golden, actual):
            if g["status"] == "raised":
                golden_raised += 1
                continue
            where = f"sample {g['index']} shapes {g['shapes']}"
            if a["status"] == "raised":
                case.update(status="error", message=f"{where}: raised under {case['details']['cpu_capability']} "
                                                    f"but not under {self.golden}: {a['message']}")
                return case
            o = samples.Outcome(shapes=g["shapes"])
            samples._compare(a["result"], g["result"], tol, metadata_only is None, o,
                             "grad" if case["details"]["check"] == "backward" else "output")
            compared += 1
            bitwise += 0 if a["digest"] == g["digest"] else 1
            for key in ("max_abs", "max_rel", "max_ulp"):
                setattr(worst, key, max(getattr(worst, key), getattr(o, key)))
            if o.mismatch:
                failing.append(f"{where}: {o.mismatch}")
        case["metrics"] = {"samples": compared, "failing_samples": len(failing), "bitwise_differing_samples": bitwise,
                           "max_abs": worst.max_abs, "max_rel": worst.max_rel, "max_ulp": worst.max_ulp}
        case["details"]["bitwise"] = (f"{bitwise} of {compared} samples differ bitwise from cpu@{self.golden} "
                                      f"(max {worst.max_ulp:g} ULP); the tolerance judges them" if bitwise else
                                      f"all {compared} samples are bitwise equal to cpu@{self.golden}")
        if golden_raised:
            case["details"]["golden_raised"] = f"{golden_raised} sample(s) raised on the golden and were not compared"
        if compared == 0:
            case.update(status="skip", execution="not_run", message="no sample ran on the golden capability")
        elif failing:
            case["details"]["failing_samples"] = "\n".join(failing[:10])
            case.update(status="fail", message=f"{len(failing)} of {compared} samples differ from cpu@{self.golden}; "
                                               f"first: {failing[0]}; tolerance {tol.describe()}")
        return case


def run_row(request, out, cases, seed, run_one) -> None:
    """The suite's run loop for a capability row: run_one(runner, index) is one case's record."""
    runner = Runner(request, cases, request.get("start", 0), seed)
    try:
        for index in range(request.get("start", 0), len(cases)):
            run_one(runner, index)
    finally:
        runner.close()

