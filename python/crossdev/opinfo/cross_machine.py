"""The cross-machine axis of an opinfo row (docs/opinfo.md, "Cross-machine"): two runners (say x86 and
ARM) run byte-identical samples on their CPUs, each records the outputs it computed beside its bundle, and
`crossdev report A.json B.json` compares the two case by case (crossdev.report.cross_machine).

    {..., devices: [cpu], cross_machine: true}

    runner A:  crossdev run --matrix M --export-samples xm-a --out a.json
    runner B:  crossdev run --matrix M --replay-samples xm-a --export-samples xm-b --out b.json

The engine hands the folders to this worker as CROSSDEV_EXPORT_SAMPLES / CROSSDEV_REPLAY_SAMPLES (absolute;
conformance/cli/cmd_run.cpp). In the export folder, per row: `<row>.samples.pt` (the samples, serialised
once: inputs, grad_outputs, out= templates, as the CPU-capability axis serialises them), its
`<row>.samples.sha256`, and `<row>/<case>.json`, one outputs file per case (crossdev.report.machine_outputs).
A replaying runner copies the other runner's samples file, byte for byte, into its own folder, so both
bundles record the same digest. Each case is `execution: real`, status `pass` once its outputs are recorded:
the verdict is the pair's, in the report.

A samples file is a pickle (torch.load(weights_only=False)): replay only your own runners' artifacts."""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import sys

from . import cpu_capability, open_contract, row_check, row_tolerance
from .tolerances import tolerance_for
from crossdev.report.machine_outputs import SCHEMA, VERSION, sha256_of

KEY = "cross_machine"
EXPORT_ENV, REPLAY_ENV = "CROSSDEV_EXPORT_SAMPLES", "CROSSDEV_REPLAY_SAMPLES"
SAMPLES_SCHEMA = "crossdev.cross_machine_samples"


def enabled(row) -> bool:
    return bool(row.get(KEY))


def row_problems(row) -> list:
    """[(key, message)] of a cross_machine row that is bad input."""
    if not enabled(row):
        return []
    problems = []
    if list(row.get("devices", [])) != ["cpu"]:
        problems.append(("devices", "a cross_machine row compares two runners' CPUs: expected devices: [cpu]"))
    if cpu_capability.KEY in row:
        problems.append((cpu_capability.KEY, "cross_machine and cpu_capabilities are two rows: the CPU-capability "
                                             "axis compares one host with itself"))
    if "compile" in row.get("variants", []):
        problems.append(("variants", "the compile variant is not run on the cross-machine axis"))
    return problems


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)


def samples_path(folder: str, row_id: str) -> str:
    return os.path.join(folder, f"{_safe(row_id)}.samples.pt")


def job_key(name, dtype_name, check, variant) -> str:
    return "/".join([name, dtype_name, check] + ([] if variant == "function" else [variant]))


def replay_problem(row) -> str | None:
    """Why the replayed samples of this row cannot be used (bad input, checked before anything runs)."""
    folder = os.environ.get(REPLAY_ENV)
    if not enabled(row) or not folder:
        return None
    path = samples_path(folder, row["id"])
    if not os.path.isfile(path):
        return (f"--replay-samples: {path}: missing (expected the samples file `crossdev run --export-samples` "
                f"wrote for row '{row['id']}' on the other runner)")
    try:
        with open(path + ".sha256", encoding="utf-8") as f:
            recorded = f.read().split()[0]
    except (OSError, IndexError):
        return f"--replay-samples: {path}.sha256: missing or empty (expected the digest written beside {path})"
    actual = sha256_of(path)
    if actual != recorded:
        return (f"--replay-samples: {path}: sha256 {actual[:16]}... does not match {path}.sha256 ({recorded[:16]}...): "
                "the file is corrupt or truncated (expected the bytes the other runner exported)")
    return None


def _write_digest(path: str) -> str:
    digest = sha256_of(path)
    with open(path + ".sha256", "w", encoding="utf-8") as f:
        f.write(f"{digest}  {os.path.basename(path)}\n")
    return digest


def _encode(result) -> list:
    """A result's leaves: tensors as dtype, shape and base64 bytes (little-endian, contiguous); others by repr."""
    import base64

    import torch
    from torch.utils._pytree import tree_flatten

    out = []
    for t in tree_flatten(result)[0]:
        if not isinstance(t, torch.Tensor):
            out.append({"value": repr(t)})
            continue
        t = t.detach().cpu()
        t = t.to_dense() if t.layout != torch.strided else t
        t = torch.view_as_real(t) if t.is_complex() else t
        data = t.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        out.append({"dtype": str(t.dtype).replace("torch.", ""),
                    "shape": list(t.shape), "data": base64.b64encode(data).decode("ascii")})
    return out


class Runner:
    """A cross_machine row's cases, from `start` on (the same interface as cpu_capability.Runner)."""

    def __init__(self, request, cases, start, seed):
        self.request, self.cases, self.start, self.seed = request, cases, start, seed
        self.row = request["row"]
        self.export, self.replay = os.environ.get(EXPORT_ENV), os.environ.get(REPLAY_ENV)
        self.doc = None

    def _prepare(self):
        import torch
        from . import samples  # imports torch: the row check (row_check.py) must not
        path = samples_path(self.export, self.row["id"])
        self.outputs_dir = os.path.join(self.export, _safe(self.row["id"]))
        if self.start == 0:  # a fresh run (a resumed one, after a crash, keeps what the first worker wrote)
            shutil.rmtree(self.outputs_dir, ignore_errors=True)
            if self.replay:
                source = samples_path(self.replay, self.row["id"])
                if os.path.realpath(source) != os.path.realpath(path):
                    shutil.copyfile(source, path)
            else:
                jobs = {}
                for op, name, _, dtype_name, check, variant in self.cases:
                    key = job_key(name, dtype_name, check, variant)
                    if key not in jobs and not samples.variant_missing(op, variant, check):
                        jobs[key] = cpu_capability._job(op, name, dtype_name, check, variant,
                                                        row_check.max_samples(self.row), self.seed)
                torch.save({"schema": SAMPLES_SCHEMA, "row": self.row["id"], "torch": torch.__version__,
                            "machine": platform.machine(), "jobs": jobs}, path + ".tmp")
                os.replace(path + ".tmp", path)
            _write_digest(path)
        os.makedirs(self.outputs_dir, exist_ok=True)
        self.samples_sha256 = sha256_of(path)
        self.doc = torch.load(path, weights_only=False)

    def close(self):
        pass

    def run_case(self, op, name, kind, dtype_name, check, variant, case) -> dict:
        import torch

        from .capability_worker import job_records
        details = case["details"]
        details.update(axis=KEY, machine=platform.machine(), host=platform.node())
        case.update(device="cpu", execution="real")
        if not self.export:
            case.update(status="skip", execution="not_run",
                        message="a cross_machine row records its outputs only with `crossdev run --export-samples DIR` "
                                "(docs/opinfo.md, \"Cross-machine\")")
            return case
        if self.doc is None:
            self._prepare()
        key = job_key(name, dtype_name, check, variant)
        details.update(samples_sha256=self.samples_sha256,
                       samples_from=f"replayed from {self.replay}" if self.replay else "generated on this runner")
        job = self.doc["jobs"].get(key)
        if job is None:
            case.update(status="error", message=f"the replayed samples {samples_path(self.replay, self.row['id'])} "
                                                f"have no job '{key}': the other runner's row selected other cases")
            return case
        tol = row_tolerance.apply(tolerance_for(op, "cpu", getattr(torch, dtype_name)), self.row, dtype_name)
        metadata_only = open_contract.metadata_only_reason(op, name)
        details.update(tolerance=f"rtol={tol.rtol:g}, atol={tol.atol:g}", tolerance_source=tol.source)
        records = job_records(job)
        doc = {"schema": SCHEMA, "schema_version": VERSION, "case": case["id"], "samples_sha256": self.samples_sha256,
               "host": platform.node(), "machine": platform.machine(), "torch": torch.__version__,
               "cpu_capability": torch.backends.cpu.get_cpu_capability(), "byteorder": sys.byteorder,
               "tolerance": {"rtol": tol.rtol, "atol": tol.atol, "source": tol.source},
               "samples": [{"index": r["index"], "shapes": str(r["shapes"]), "status": r["status"],
                            "message": r.get("message", ""),
                            "values": _encode(r["result"]) if r["status"] == "ok" else []} for r in records]}
        if metadata_only:
            doc["compared"] = details["compared"] = "shape, dtype and layout only: " + metadata_only
        name_in_folder = _safe(key) + ".json"
        path = os.path.join(self.outputs_dir, name_in_folder)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(doc, f)
        os.replace(path + ".tmp", path)
        raised = sum(r["status"] != "ok" for r in records)
        folder = os.path.basename(self.export.rstrip("/"))
        details.update(outputs="/".join([folder, _safe(self.row["id"]), name_in_folder]), outputs_sha256=sha256_of(path), export_dir=self.export)
        case["metrics"] = {"samples": len(records) - raised, "raised_samples": raised,
                           "golden_raised_samples": job["golden_raised"]}
        case["message"] = (f"outputs of {len(records) - raised} sample(s) recorded ({raised} raised) on "
                           f"{platform.machine()}: `crossdev report` compares them with another runner's")
        return case


def run_row(request, out, cases, seed, run_one) -> None:
    """The suite's run loop for a cross_machine row: run_one(runner, index) is one case's record."""
    runner = Runner(request, cases, request.get("start", 0), seed)
    for index in range(request.get("start", 0), len(cases)):
        run_one(runner, index)
