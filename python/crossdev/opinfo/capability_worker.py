"""`python -m crossdev.opinfo.capability_worker JOBS_FILE OUT_DIR [LIBRARY...]`, started by
crossdev.opinfo.cpu_capability with ATEN_CPU_CAPABILITY set: runs serialised OpInfo samples under that
capability, after loading the run's --load-library libraries (so a user's CPU kernels are the ones judged).

Events on stdout (docs/python-worker.md; what the ops print goes to stderr): `ready` (`capability`:
torch.backends.cpu.get_cpu_capability()) once the jobs are loaded; then for each job index read from stdin,
`done` (`index`) once OUT_DIR/<capability>_<index>.pt holds one record per sample: {"index", "shapes", "status": "ok" |
"raised", "result" (outputs, or gradients for a backward job), "digest" (of the result's bytes),
"message"}. Exits at end of input."""
from __future__ import annotations

import hashlib
import os
import pickle
import sys

import torch
from torch.utils._pytree import tree_flatten, tree_map

from crossdev import child_process

from .samples import _call

SEED = 0  # crossdev.opinfo.suite.SEED: the seed each sample's call runs under (random ops)


class _Op:
    """What samples._call needs of an OpInfo: the callable and its in-place form."""

    def __init__(self, fn, inplace):
        self.fn, self.inplace_variant = fn, inplace

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


class _Sample:
    def __init__(self, entry):
        self.input, self.args, self.kwargs = entry["input"], entry["args"], entry["kwargs"]


def _op_of(job):
    fn = pickle.loads(job["op"]) if job["op"] else None
    inplace = pickle.loads(job["inplace"]) if job["inplace"] else None
    if fn is None or (job["variant"] == "inplace" and inplace is None):
        from .selection import full_name, load_op_db  # a lambda: found in op_db by name (slower, rare)
        info = next(op for op in load_op_db() if full_name(op) == job["name"])
        fn, inplace = info.op, info.inplace_variant
    return _Op(fn, inplace)


def _digest(result) -> str:
    h = hashlib.sha256()
    for t in tree_flatten(result)[0]:
        if isinstance(t, torch.Tensor):
            t = t.detach().cpu()
            if t.layout != torch.strided:
                t = t.to_dense()
            h.update(str((tuple(t.shape), t.dtype)).encode())
            h.update(t.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        else:
            h.update(repr(t).encode())
    return h.hexdigest()


def _run_sample(op, job, entry):
    sample = _Sample(entry)
    torch.manual_seed(SEED + entry["index"])
    result = _call(op, sample, job["variant"], entry.get("out_template"), "cpu")
    if job["check"] == "backward":
        outs = [t for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
        inputs = [t for t in tree_flatten((sample.input, sample.args, sample.kwargs))[0]
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        if not outs or not inputs:
            return []
        result = list(torch.autograd.grad(outs, inputs, entry["grad_outputs"], allow_unused=True))
    return tree_map(lambda t: t.detach() if isinstance(t, torch.Tensor) else t, result)


def job_records(job) -> list:
    """One record per sample of a serialised job, run in this process (also the cross-machine axis's,
    crossdev.opinfo.cross_machine): {"index", "shapes", "status", "result", "digest", "message"}."""
    op = _op_of(job)
    records = []
    for entry in job["samples"]:
        record = {"index": entry["index"], "shapes": entry["shapes"], "status": "ok"}
        try:
            record["result"] = _run_sample(op, job, entry)
            record["digest"] = _digest(record["result"])
        except Exception as e:  # noqa: BLE001  compared with the golden's outcome by the parent
            text = str(e).strip()
            record.update(status="raised", message=f"{type(e).__name__}: {text.splitlines()[0] if text else ''}")
        records.append(record)
    return records


def run_job(job, capability, index, out_dir) -> None:
    records = job_records(job)
    path = os.path.join(out_dir, f"{capability}_{index}.pt")
    torch.save(records, path + ".tmp")
    os.replace(path + ".tmp", path)


def main(argv) -> int:
    child_process.die_with_parent()  # the opinfo worker that started us (the engine kills it on a timeout)
    jobs_file, out_dir, libraries = argv[0], argv[1], argv[2:]
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    capability = os.environ.get("ATEN_CPU_CAPABILITY", "default")
    for path in libraries:
        torch.ops.load_library(path)
    jobs = torch.load(jobs_file, weights_only=False)
    protocol.write(child_process.event_line("ready", capability=torch.backends.cpu.get_cpu_capability()) + "\n")
    for line in sys.stdin:
        index = int(line)
        run_job(jobs[index], capability, index, out_dir)
        protocol.write(child_process.event_line("done", index=index) + "\n")
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)  # as crossdev.worker: no interpreter teardown after autograd ran
