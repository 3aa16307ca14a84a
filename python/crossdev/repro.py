"""`crossdev repro BUNDLE CASE_ID [--out DIR] [--device DEV]`: a standalone script for a failing opinfo, models
or ops case (docs/repro.md; an ops case's script: crossdev.repro_ops). The script needs torch only (and the device's package: torch_xla for xla): no crossdev, no
op_db. It rebuilds the sample the case recorded (crossdev.opinfo.repro_record: the exact CPU tensors, the
call, op_db's output_process_fn_grad, the backward's grad_outputs, the tolerance, the TF32 switches), runs
it on the CPU and on `--device` (default: the case's device kind), compares with torch.testing.assert_close
at the case's rtol/atol, prints both results and the worst element, and exits 1 while they differ, 0 once
they agree. For a case whose device raised, the script is the call alone: exit 1 while it raises; for a case whose
worker died (a crash, recorded by the engine's rerun of the case alone), the call in a child process: exit 1 while it dies.

Exit codes: 0 written, 2 bad input (a case not in the bundle, a case that did not fail, a case without a
recorded sample, a bundle from another torch without its exported samples). Imports torch only to read or
write a .pt file."""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
from pathlib import Path

EXIT_OK, EXIT_BAD_INPUT = 0, 2
REPRODUCIBLE = ("fail", "error", "crash", "xfail")
SUITES = ("opinfo", "models", "ops")
# the schema of each suite's recorded sample (crossdev.opinfo.repro_record; conformance/parity/ops_repro_sample.h)
SAMPLE_SCHEMAS = {"opinfo": "crossdev.repro_sample", "models": "crossdev.repro_sample", "ops": "crossdev.ops_repro_sample"}
LITERAL_ELEMENTS = 4096  # more elements than this in a sample: its tensors go to a .pt file beside the script
SCRIPT_NAME, TENSORS_NAME = "repro.py", "repro_tensors.pt"
# the device type's Python package a script imports before it names the device (crossdev/runtimes.py's kinds)
DEVICE_PACKAGES = {"xla": "torch_xla", "xpu": None, "mps": None, "cuda": None}


class BadInput(Exception):
    pass


def command_for(bundle: str, case_id: str) -> str:
    """The command a report or a failure text shows for a case."""
    quote = (lambda s: s if re.fullmatch(r"[A-Za-z0-9._/:@+=-]+", s) else "'" + s.replace("'", "'\\''") + "'")
    return f"crossdev repro {quote(str(bundle))} {quote(case_id)}"


HIDDEN_DETAILS = ("repro_sample", "reproduce")  # what a report leaves out of a case's details (a record, not a reason)


def reproduce_line(case, bundle: str | None) -> str:
    """'' or the line a failure text shows: the command, or why there is no script."""
    details = case.get("details") or {}
    if case.get("status") not in REPRODUCIBLE or case.get("suite", "opinfo") not in SUITES:
        return ""
    if "repro_sample" in details or "repro_sample_file" in details:
        return command_for(bundle or "BUNDLE", case.get("id", ""))
    return details.get("repro", "")


def has_record(case) -> bool:
    details = case.get("details") or {}
    return case.get("status") in REPRODUCIBLE and ("repro_sample" in details or "repro_sample_file" in details)


# ------------------------------------------------------------------------------------------------ reading

def _installed_torch() -> str:
    try:
        from importlib.metadata import version
        return version("torch")
    except Exception:  # noqa: BLE001
        return ""


def _base(version: str) -> str:
    return version.split("+")[0]


def load_record(bundle_path: str, case_id: str) -> tuple[dict, dict]:
    """(case, record) or BadInput naming the file and what was expected."""
    from crossdev.report.bundle import BundleError, load_bundles

    try:
        bundles = load_bundles(bundle_path)
    except BundleError as e:
        raise BadInput(str(e)) from None
    found = [(b, c) for b in bundles for c in b.cases if c.get("id") == case_id]
    if not found:
        failing = [c["id"] for b in bundles for c in b.cases if c.get("status") in REPRODUCIBLE]
        hint = f"; its failing cases: {', '.join(failing[:5])}{' ...' if len(failing) > 5 else ''}" if failing else \
            "; it has no failing case"
        raise BadInput(f"{bundle_path}: no case '{case_id}' (expected the id of one of its "
                       f"{sum(len(b.cases) for b in bundles)} cases{hint})")
    bundle, case = found[0]
    status = case.get("status")
    if status not in REPRODUCIBLE:
        why = "it passed: there is nothing to reproduce" if status in ("pass", "xpass") else \
            f"it is {status}: {case.get('message', '')[:200]}"
        raise BadInput(f"{bundle_path}: case '{case_id}' is {status}, {why} "
                       "(expected a case that failed, errored or crashed)")
    if case.get("suite") not in SUITES:
        raise BadInput(f"{bundle_path}: case '{case_id}' is of the {case.get('suite')} suite: `crossdev repro` writes "
                       f"scripts for {' and '.join(SUITES)} cases (expected one of those; docs/repro.md, "
                       "\"What is not covered yet\")")
    details = case.get("details") or {}
    bundle_torch = bundle.target.get("libtorch_version", "")
    if "repro_sample" in details:
        try:
            record = json.loads(details["repro_sample"])
        except json.JSONDecodeError as e:
            raise BadInput(f"{bundle_path}: case '{case_id}': details.repro_sample is not JSON ({e.msg} at "
                           f"{e.lineno}:{e.colno}; expected the record crossdev's worker writes)") from None
        expected_schema = SAMPLE_SCHEMAS[case.get("suite")]
        if record.get("schema") != expected_schema:
            raise BadInput(f"{bundle_path}: case '{case_id}': details.repro_sample has schema "
                           f"{record.get('schema')!r} (expected {expected_schema!r})")
        return case, record
    if "repro_sample_file" in details:
        recorded = Path(details["repro_sample_file"])
        candidates = [recorded] if recorded.is_absolute() else []
        candidates.append(Path(bundle_path).resolve().parent / recorded.parent.parent.name / "repro" / recorded.name)
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            raise BadInput(f"{bundle_path}: case '{case_id}': its sample file {recorded} is missing (expected the "
                           "file `crossdev run --export-samples DIR` wrote, at that path or in DIR/repro/ beside the "
                           "bundle)")
        import torch
        try:
            record = torch.load(path, weights_only=False)  # a pickle: your own runners' artifacts only
        except Exception as e:  # noqa: BLE001
            raise BadInput(f"{path}: cannot be read ({type(e).__name__}: {str(e)[:200]}; expected a torch.save "
                           "of a crossdev.repro_sample)") from None
        if not isinstance(record, dict) or record.get("schema") != "crossdev.repro_sample":
            raise BadInput(f"{path}: not a crossdev.repro_sample (expected the record crossdev's worker writes)")
        record = dict(record, tensors=[_tensor_doc_of(t) for t in record["tensors"]])
        return case, record
    if "repro" in details:
        raise BadInput(f"{bundle_path}: case '{case_id}': {details['repro']}")
    if "random_ops" in details or "distribution" in details:
        raise BadInput(f"{bundle_path}: case '{case_id}' is a random op's, judged by the law of its draws "
                       f"({details.get('random_ops', 'random ops')}), not by one sample's values: no script compares "
                       "it (expected a case compared value by value; docs/repro.md)")
    installed = _installed_torch()
    if bundle_torch and installed and _base(bundle_torch) != _base(installed):
        raise BadInput(f"{bundle_path}: case '{case_id}' has no exported sample and the bundle is from torch "
                       f"{bundle_torch}, this Python has torch {installed}: op_db's samples differ between versions "
                       "(expected a bundle whose failing cases recorded their sample: rerun the case with this "
                       "crossdev, with --export-samples DIR for large samples)")
    raise BadInput(f"{bundle_path}: case '{case_id}' recorded no sample (expected details.repro_sample or "
                   "details.repro_sample_file: the bundle is from a crossdev before `crossdev repro`, or the "
                   "device failed while making op_db's sample; rerun the case with this crossdev)")


def _tensor_doc_of(t) -> dict:
    from crossdev.opinfo.repro_record import tensor_doc
    return tensor_doc(t)


# ------------------------------------------------------------------------------------------------ writing

def _element_literals(doc) -> tuple[str, int]:
    """A tensor doc's values as a Python list literal (exact: float32/16 go through Python floats) and count."""
    import array
    import struct

    raw = base64.b64decode(doc["data"])
    dtype = doc["dtype"]
    formats = {"float64": "d", "float32": "f", "float16": "e", "int64": "q", "int32": "i", "int16": "h",
               "int8": "b", "uint8": "B", "bool": "?", "complex64": "f", "complex128": "d", "uint16": "H",
               "uint32": "I", "uint64": "Q"}
    if dtype == "bfloat16":  # the upper half of a float32
        values = [struct.unpack("<f", b"\x00\x00" + raw[i:i + 2])[0] for i in range(0, len(raw), 2)]
    elif dtype in formats:
        fmt = formats[dtype]
        size = struct.calcsize(fmt)
        values = list(struct.unpack(f"<{len(raw) // size}{fmt}", raw))
    else:
        raise BadInput(f"a {dtype} tensor has no literal form")
    del array
    return "[" + ", ".join(repr(v) for v in values) + "]", len(values)


def _value_source(node, large: bool) -> str:
    if isinstance(node, (bool, int, str)) or node is None:
        return repr(node)
    if not isinstance(node, dict) or len(node) != 1:
        raise BadInput(f"unexpected record node {node!r:.80}")
    (key, v), = node.items()
    if key == "tensor":
        return f"T[{v}]"
    if key == "float":
        return f"float({v!r})" if v in ("nan", "inf", "-inf") else v
    if key == "complex":
        return f"complex(float({v[0]!r}), float({v[1]!r}))"
    if key in ("tuple", "size"):
        items = [_value_source(x, large) if key == "tuple" else repr(x) for x in v]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if key == "list":
        return "[" + ", ".join(_value_source(x, large) for x in v) + "]"
    if key == "dict":
        return "{" + ", ".join(f"{k!r}: {_value_source(x, large)}" for k, x in v) + "}"
    if key == "attr":
        return v
    if key == "device":
        return "torch.device(device)"  # a device argument names the side's own device
    if key == "slice":
        return "slice(" + ", ".join(_value_source(x, large) for x in v) + ")"
    if key == "ellipsis":
        return "..."
    raise BadInput(f"unexpected record node {key!r}")


def _sample_tensor_count(structure) -> int:
    def count(node):
        if isinstance(node, dict) and len(node) == 1:
            (key, v), = node.items()
            if key == "tensor":
                return 1
            if key in ("tuple", "list"):
                return sum(count(x) for x in v)
            if key == "dict":
                return sum(count(x) for _, x in v)
        return 0
    return sum(count(structure[k]) for k in ("input", "args", "kwargs"))


def _callable_source(text: str, name: str) -> tuple[str, str]:
    """(definitions, expression) for a recorded callable (a torch path, a lambda, or a def + marker)."""
    from crossdev.opinfo.repro_record import DEF_MARK
    if DEF_MARK in text:
        body, _, fn = text.rpartition(DEF_MARK)
        return body.rstrip() + "\n", fn.strip()
    return "", text


# What every generated script defines the same way (the opinfo and models scripts here, the ops script in
# crossdev.repro_ops): inserted verbatim, so each script stays standalone.
SCRIPT_HELPERS = '''def worst(actual, expected, rtol, atol):
    """The element farthest outside the tolerance: (index, actual, expected)."""
    a, e = actual.to(torch.complex128 if actual.is_complex() else torch.float64), expected.to(
        torch.complex128 if expected.is_complex() else torch.float64)
    excess = (a - e).abs() - (atol + rtol * e.abs())
    excess = torch.where(torch.isnan(excess) & ~(torch.isnan(a) & torch.isnan(e)), torch.full_like(excess, float("inf")), excess)
    excess = torch.nan_to_num(excess, nan=float("-inf"))
    flat = int(excess.reshape(-1).argmax()) if excess.numel() else 0
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), actual.shape)) if actual.dim() else ()
    return index, actual[index].item() if actual.numel() else None, expected[index].item() if expected.numel() else None


def call_alone(call, device):
    """A case whose device raised: exit 1 while the call raises (the error printed), 0 once it returns."""
    try:
        call()
    except Exception as e:  # the device's error, as crossdev recorded it
        print(f"{device}: the call raised {type(e).__name__}: {e}")
        return 1
    print(f"{device}: the call returned without raising: fixed")
    return 0'''


def script_text(case: dict, record: dict, bundle_path: str, device: str, tensors_file: bool) -> str:
    lines = []
    tensor_lines = []
    if tensors_file:
        tensor_lines.append(f"T = torch.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                            f"{TENSORS_NAME!r}), weights_only=True)")
        tensor_lines.append("T = [t.requires_grad_(rg) for t, rg in zip(T, "
                            f"{[bool(d.get('requires_grad')) for d in record['tensors']]!r})]")
    else:
        tensor_lines.append("T = [")
        for doc in record["tensors"]:
            values, _ = _element_literals(doc)
            complex_ = doc["dtype"].startswith("complex")
            dtype = f"torch.{doc['dtype']}"
            if complex_:
                real = "torch.float32" if doc["dtype"] == "complex64" else "torch.float64"
                tensor_lines.append(f"    _complex({values}, {real}, {tuple(doc['shape'])!r}, "
                                    f"{bool(doc.get('requires_grad'))}),")
            else:
                tensor_lines.append(f"    _tensor({values}, {dtype}, {tuple(doc['shape'])!r}, "
                                    f"{bool(doc.get('requires_grad'))}),")
        tensor_lines.append("]")
    s = record["structure"]
    sample_src = (f"({_value_source(s['input'], tensors_file)}, {_value_source(s['args'], tensors_file)}, "
                  f"{_value_source(s['kwargs'], tensors_file)})")
    grads_src = _value_source(s["grad_outputs"], tensors_file)
    before = record.get("before") or []
    before_src = "BEFORE = [" + "".join(
        f"\n    ({b['sample']!r}, {b['seed']!r}, lambda T, device: ({_value_source(b['structure']['input'], tensors_file)}, "
        f"{_value_source(b['structure']['args'], tensors_file)}, {_value_source(b['structure']['kwargs'], tensors_file)})),"
        for b in before) + ("\n]" if before else "]")
    if before:
        replay_doc = (f"\nThe {len(before)} sample(s) the case ran on the device before this one (op_db samples "
                      f"{', '.join(str(b['sample']) for b in before)}) run first, in the same order, their results unused:\n"
                      "a device that reuses a compiled graph for another argument fails only after them; --alone skips them.")
    elif record.get("before_left_out"):
        replay_doc = (f"\nThe {record['before_left_out']} sample(s) the case ran before this one are not replayed (too large to "
                      "record inline: rerun with --export-samples DIR to include them).")
    else:
        replay_doc = ""
    call_defs, call = _callable_source(record["call"], "call")
    process_defs, process = _callable_source(record["process"], "process") if record.get("process") else ("", "")
    kind = record["device_kind"].split("@")[0]
    package = DEVICE_PACKAGES.get(kind)
    if case.get("suite") == "models":
        what = (f"The case: model {(case.get('details') or {}).get('model', '?')}, {record['dtype']}; its first divergence "
                f"{(case.get('details') or {}).get('first_divergence', '?')} ({record['op']}): that op alone, called "
                "with the CPU golden's inputs to it (teacher forced), exact values")
    else:
        what = (f"The case: {record['op']} ({record['check']}, variant {record['variant']}, {record['dtype']}), op_db "
                f"sample {record['sample']},\nmade on {record['device'] or kind} and copied to the CPU; these are its "
                "exact values")
    header = f'''#!/usr/bin/env python3
"""Reproduces crossdev case {case["id"]}
(bundle {os.path.basename(bundle_path)}; `crossdev repro`, docs/repro.md). Needs only torch{f" and {package}" if package else ""}.

crossdev's verdict: {case["status"]}: {case.get("message", "")[:600]}

{what}. The call is {call.splitlines()[0][:120]}
{"with op_db's output_process_fn_grad applied to both results" if process else ""}. Tolerance: rtol={record["rtol"]!r},
atol={record["atol"]!r} ({record["tolerance_source"]}), torch.testing.assert_close with equal_nan=True.
Recorded with torch {record["torch"]}.{replay_doc}

    python3 {SCRIPT_NAME} [--device DEV] [--alone]   # default {device}; exit 1 while the device differs from the CPU
                                           # ({ {"raised": "raises", "crashed": "dies"}.get(record["kind"], "differs")}), 0 once fixed
"""
'''
    body = f'''import argparse
import os
import sys

import torch

parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
parser.add_argument("--device", default={device!r}, help="the device to run on (default: %(default)s); cpu: the golden itself")
parser.add_argument("--alone", action="store_true", help="the failing sample alone, without the samples the case ran before it")
ARGS = parser.parse_args()
DEVICE_ARG = ARGS.device
if DEVICE_ARG.split(":")[0] == "xla":
    import torch_xla  # noqa: F401  (registers the xla device)

CHECK, VARIANT, KIND = {record["check"]!r}, {record["variant"]!r}, {record["kind"]!r}
RTOL, ATOL = {record["rtol"]!r}, {record["atol"]!r}
SEED = {record["seed"]!r}
N_SAMPLE_TENSORS = {_sample_tensor_count(s)}  # forward: the sample's tensors are compared after the call too
# the numerics switches the case ran with (crossdev's parity mode turns TF32 off on cuda)
torch.backends.cuda.matmul.allow_tf32 = {record["tf32"]["matmul"]!r}
torch.backends.cudnn.allow_tf32 = {record["tf32"]["cudnn"]!r}


nan, inf = float("nan"), float("inf")  # the literals below spell non-finite values so


def _tensor(values, dtype, shape, requires_grad):
    return torch.tensor(values, dtype=dtype).reshape(shape).requires_grad_(requires_grad)


def _complex(values, real_dtype, shape, requires_grad):
    return torch.view_as_complex(torch.tensor(values, dtype=real_dtype).reshape(*shape, 2)).requires_grad_(requires_grad)


{chr(10).join(tensor_lines)}

{call_defs}{process_defs}
def sample(device):
    """The sample on `device`: (input, args, kwargs), fresh copies (an op may update its inputs in place),
    requires_grad kept."""
    moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
    return _with(moved, device)


def _with(T, device):
    return {sample_src}


# (op_db sample, seed, the sample from T) of the samples the case ran on the device before this one, in order
{before_src}


def flatten(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in flatten(item)]
    if isinstance(x, dict):
        return [y for item in x.values() for y in flatten(item)]
    return [x]


def empty_like_on(template, device):
    if isinstance(template, torch.Tensor):
        return torch.empty_like(template.detach(), device=device)
    return tuple(empty_like_on(t, device) for t in template)


def call(inp, args, kwargs, device):
    """The case's call ({record["variant"]} variant)."""
    fn = {call}
    if VARIANT == "inplace":
        return fn(inp.clone(), *args, **kwargs)
    if VARIANT == "out":
        template = fn(*[_cpu(x) for x in (inp,)], *_cpu(args), **_cpu(kwargs))
        out = empty_like_on(template, device)
        fn(inp, *args, **kwargs, out=out)
        return out
    return fn(inp, *args, **kwargs)


def _cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu")
    if isinstance(x, tuple):
        return tuple(_cpu(y) for y in x)
    if isinstance(x, list):
        return [_cpu(y) for y in x]
    if isinstance(x, dict):
        return {{k: _cpu(y) for k, y in x.items()}}
    return x


def process(result):
    """op_db's output_process_fn_grad of the sample, applied to both results{"" if process else " (none: the identity)"}."""
    return {f"({process})(result)" if process else "result"}


def run(device):
    """The results crossdev compared: the outputs (forward) or the inputs' gradients (backward), after the
    samples the case ran before this one (BEFORE; not with --alone), on the same device, results unused."""
    for _, seed, make in ([] if ARGS.alone else BEFORE):
        torch.manual_seed(seed)
        moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
        try:
            results(*make(moved, device), device)
        except Exception as e:  # the case went on past a sample that raised: so does the script
            print(f"{{device}}: an earlier sample raised {{type(e).__name__}}: {{str(e)[:200]}}")
    torch.manual_seed(SEED)
    return results(*sample(device), device)


def results(inp, args, kwargs, device):
    """One sample's results, on the CPU (on a lazy device, copying them runs the graph)."""
    result = process(call(inp, args, kwargs, device))
    if CHECK == "forward":  # the outputs, then the sample's tensors after the call (an op updates some in place)
        values = flatten(result) + [t for t in flatten((inp, args, kwargs)) if isinstance(t, torch.Tensor)]
        return [t.detach().to("cpu") if isinstance(t, torch.Tensor) else t for t in values]
    outs = [t for t in flatten(result) if isinstance(t, torch.Tensor) and t.requires_grad]
    inputs = [t for t in flatten((inp, args, kwargs)) if isinstance(t, torch.Tensor) and t.requires_grad]
    grad_outputs = {grads_src}
    grads = torch.autograd.grad(outs, inputs, [g.to(o.device) for g, o in zip(grad_outputs, outs)], allow_unused=True)
    return [g.detach().to("cpu") if g is not None else None for g in grads]


{SCRIPT_HELPERS}


def main():
    device = DEVICE_ARG
    if KIND == "crashed" and not os.environ.get("CROSSDEV_REPRO_CHILD"):  # the call in a child: its death is the verdict
        import subprocess
        command = [sys.executable, *sys.orig_argv[1:]] if hasattr(sys, "orig_argv") else [sys.executable, *sys.argv]
        child = subprocess.run(command, env=dict(os.environ, CROSSDEV_REPRO_CHILD="1"))
        if child.returncode < 0:
            print(f"{{device}}: the call killed the process (signal {{-child.returncode}}), as in crossdev's run")
            return 1
        return 1 if child.returncode else 0
    if KIND in ("raised", "crashed"):  # the device raised (or died) on this sample: the call alone
        return call_alone(lambda: run(device), device)
    expected = run("cpu")
    actual = run(device)
    if len(actual) != len(expected):
        print(f"{{device}} returned {{len(actual)}} values, the CPU {{len(expected)}}")
        return 1
    failed = 0
    for i, (a, e) in enumerate(zip(actual, expected)):
        outputs = len(actual) - N_SAMPLE_TENSORS if CHECK == "forward" else len(actual)
        label = f"input {{i - outputs}} after the call" if i >= outputs else \
            ("output" if CHECK == "forward" else "grad") + f"[{{i}}]"
        if isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor):
            try:
                torch.testing.assert_close(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
            except AssertionError as mismatch:
                failed += 1
                print(f"{{label}} differs on {{device}} (rtol={{RTOL}}, atol={{ATOL}}):\\n{{mismatch}}")
                if a.shape == e.shape and a.numel():
                    index, av, ev = worst(a, e, RTOL, ATOL)
                    print(f"worst element {{list(index)}}: {{device}} {{av!r}}, cpu {{ev!r}}")
                print(f"{{device}}:\\n{{a}}\\ncpu:\\n{{e}}")
        elif a != e and not (a != a and e != e):
            failed += 1
            print(f"{{label}}: {{a!r}} on {{device}}, {{e!r}} on the CPU")
    if failed:
        print(f"FAIL: {{failed}} of {{len(expected)}} result(s) differ from the CPU")
        return 1
    print(f"OK: {{device}} agrees with the CPU on all {{len(expected)}} result(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
    return header + body


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write(bundle_path: str, case_id: str, out_dir: str | None, device: str | None) -> Path:
    case, record = load_record(bundle_path, case_id)
    details = case.get("details") or {}
    out = Path(out_dir) if out_dir else Path("repro") / re.sub(r"[^A-Za-z0-9._-]", "_", case_id)
    if case.get("suite") == "ops":
        from crossdev import repro_ops
        text = repro_ops.script_text(case, record, bundle_path, device or record["device_kind"], _element_literals)
        return _write_script(out, text)
    if record.get("kind") != "raised":
        rule = next((details[k] for k in ("compared", "random_ops") if k in details), None)
        if rule:
            raise BadInput(f"{bundle_path}: case '{case_id}' was judged by a rule of crossdev's own ({rule[:160]}), "
                           "not by assert_close alone: the script would judge it otherwise (expected a case compared "
                           "value by value; docs/repro.md)")
    device = device or record["device_kind"].split("@")[0]
    elements = sum(len(base64.b64decode(d["data"])) // max(1, _itemsize(d["dtype"])) for d in record["tensors"])
    large = elements > LITERAL_ELEMENTS
    out.mkdir(parents=True, exist_ok=True)
    if large:
        import io

        import torch
        from crossdev.opinfo.repro_record import tensor_from_doc
        buffer = io.BytesIO()
        torch.save([tensor_from_doc(d).detach() for d in record["tensors"]], buffer)
        _atomic_write(out / TENSORS_NAME, buffer.getvalue())
    return _write_script(out, script_text(case, record, bundle_path, device, large))


def _write_script(out: Path, text: str) -> Path:
    compile(text, str(out / SCRIPT_NAME), "exec")  # a script that does not parse is crossdev's bug: never written
    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(out / SCRIPT_NAME, text.encode())
    os.chmod(out / SCRIPT_NAME, 0o755)
    return out / SCRIPT_NAME


def _itemsize(dtype: str) -> int:
    return {"float64": 8, "int64": 8, "complex128": 8, "uint64": 8, "float32": 4, "int32": 4, "complex64": 4,
            "uint32": 4, "float16": 2, "bfloat16": 2, "int16": 2, "uint16": 2}.get(dtype, 1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="crossdev repro", description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", help="the bundle `crossdev run --out` wrote")
    parser.add_argument("case_id", help="the failing case's id")
    parser.add_argument("--out", default=None, help="the folder of the script (default: repro/<case id>)")
    parser.add_argument("--device", default=None, help="the script's default device (default: the case's device kind)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_OK if e.code == 0 else EXIT_BAD_INPUT
    try:
        path = write(args.bundle, args.case_id, args.out, args.device)
    except BadInput as e:
        print(f"crossdev repro: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"wrote {path}: python3 {path} [--device DEV] (exit 1 while the case's failure reproduces, 0 once fixed)")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
