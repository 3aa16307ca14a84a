"""What `crossdev repro` needs to rebuild a failing opinfo case without op_db (docs/repro.md), recorded by the
worker when the case fails or errors: the first failing sample's CPU tensors (the exact ones the golden ran,
the device's copy was made from the same values), the call as a path torch resolves (`torch.tanh`,
`torch.Tensor.tanh_`), op_db's output_process_fn_grad as source when it is a self-contained lambda or
function, the backward's grad_outputs, the tolerance and the numerics switches.

The record is one JSON document in the case's `details.repro_sample` when its tensors hold at most
INLINE_BYTES bytes; a larger one is written to `<--export-samples DIR>/repro/<case>.pt` (a torch.save of the
same document, its tensors as tensors) and named by `details.repro_sample_file`; without --export-samples the
case says so in `details.repro` and `crossdev repro` explains (exit 2). A record the worker cannot write (a
call op_db defines as a closure, a sparse tensor) says why in `details.repro`: never a script that calls
something else than the case did."""
from __future__ import annotations

import ast
import base64
import builtins
import importlib
import inspect
import json
import os
import re
import textwrap

SCHEMA = "crossdev.repro_sample"
VERSION = 1
INLINE_BYTES = 16384
BEFORE_MAX = 8  # the samples before the failing one a record replays, the last ones
EXPORT_ENV = "CROSSDEV_EXPORT_SAMPLES"
# where a callable of op_db is looked up by its name when its own module path does not resolve to it
_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft", "torch.Tensor",
               "torch.masked", "torch.sparse", "torch.signal.windows", "torch.nn.init")


class Unrecordable(Exception):
    """The sample or the call has something a standalone script cannot express."""


# ------------------------------------------------------------------------------------------------ the call

def _resolve(path: str):
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _same(a, b) -> bool:
    if a is b:
        return True
    # a bound builtin or a method descriptor fetched twice is not the same object: compare what it wraps
    return getattr(a, "__self__", None) is getattr(b, "__self__", 0) and getattr(a, "__name__", 1) == getattr(b, "__name__", 2) \
        and type(a) is type(b) and getattr(a, "__qualname__", 1) == getattr(b, "__qualname__", 2)


def torch_path(fn) -> str | None:
    """'torch.tanh', 'torch.Tensor.tanh_', 'torch.nn.functional.gelu': a path under torch that resolves to `fn`."""
    name = getattr(fn, "__name__", "")
    module, qual = getattr(fn, "__module__", None) or "", getattr(fn, "__qualname__", "") or name
    import torch
    if isinstance(fn, torch._ops.OpOverloadPacket):
        return "torch.ops." + fn._qualified_op_name.replace("::", ".")
    candidates = []
    if name and "<" not in name:  # the public names first: torch.nn.functional.gelu, not torch._C._nn.gelu
        candidates += [f"{ns}.{name}" for ns in _NAMESPACES]
        owner = getattr(fn, "__objclass__", None)
        if owner is not None and owner.__name__ in ("TensorBase", "Tensor"):
            candidates.append(f"torch.Tensor.{name}")
        for prefix in ("linalg", "special", "fft"):  # torch._C._linalg.linalg_eigh is torch.linalg.eigh
            if name.startswith(prefix + "_"):
                candidates.insert(0, f"torch.{prefix}.{name[len(prefix) + 1:]}")
    if module.startswith("torch") and qual and "<" not in qual:
        candidates.append(f"{module}.{qual}")
    for path in candidates:
        obj = _resolve(path)
        if obj is not None and _same(obj, fn):
            return path
    return None


def _lambda_text(fn) -> str:
    """A lambda's own text out of the lines inspect finds for it (often the middle of a call: `op=lambda x: ...,`)."""
    import linecache
    path, first = inspect.getsourcefile(fn), fn.__code__.co_firstlineno
    # inspect's own lines stop at the first line of a lambda whose body goes on below: read on (at most 30 lines)
    lines = [linecache.getline(path, n) for n in range(first, first + 30)] if path else inspect.getsourcelines(fn)[0]
    text = textwrap.dedent("".join(lines))
    argnames = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    for start in [m.start() for m in re.finditer(r"\blambda\b", text)]:
        tail = text[start:]
        for end in range(len(tail), 0, -1):
            piece = tail[:end]
            if piece[-1:].isspace():
                continue
            try:  # in parentheses: a body on the next line parses
                node = ast.parse("(" + piece.strip() + ")", mode="eval").body
            except SyntaxError:
                continue
            if isinstance(node, ast.Tuple) and node.elts:  # `lambda x: f(x),`: the lambda is the tuple's first
                node = node.elts[0]
            if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == argnames:
                return ast.unparse(node)
            break
    raise Unrecordable(f"the source of {fn.__qualname__} could not be isolated")


DEF_MARK = "#crossdev-def "


def source_of(fn, what: str) -> str:
    """Source text that evaluates (with `torch` imported) to a function doing what `fn` does: a path under
    torch, a self-contained lambda, or a self-contained function definition followed by a last line
    `#crossdev-def NAME` (the script emits the definition, then uses NAME)."""
    import functools

    import torch
    if isinstance(fn, torch._ops.OpOverload):  # aten.slice.Tensor
        return "torch.ops." + str(fn)
    if isinstance(fn, functools.partial) and not fn.args:  # partial(F.hardsigmoid, inplace=True)
        inner = source_of(fn.func, what)
        if DEF_MARK not in inner and all(isinstance(v, (bool, int, float, str, type(None))) for v in fn.keywords.values()):
            bound = ", ".join(f"{k}={v!r}" for k, v in fn.keywords.items())
            return f"(lambda *args, **kwargs: ({inner})(*args, **kwargs, {bound}))"
    path = torch_path(fn)
    if path:
        return path
    code = getattr(fn, "__code__", None)
    if code is None:
        raise Unrecordable(f"{what} {fn!r} is neither a function nor found under torch")
    closure = _closure_lines(fn, what)  # raises for a value no script can spell
    try:
        if fn.__name__ == "<lambda>":
            text = _lambda_text(fn)
            tree = ast.parse(text, mode="eval")
        else:
            text = textwrap.dedent(inspect.getsource(fn))
            tree = ast.parse(text)
    except (OSError, TypeError, SyntaxError) as e:
        raise Unrecordable(f"{what} {fn.__module__}.{fn.__qualname__}: no source ({e})") from None
    bound = {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
             for a in n.args + n.posonlyargs + n.kwonlyargs + [x for x in (n.vararg, n.kwarg) if x]}
    bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    free = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound
    free -= set(code.co_freevars)
    foreign = sorted(n for n in free if n != "torch" and not hasattr(builtins, n))
    aliases = {}  # `F` for torch.nn.functional, `np`-free: a module of torch under another name
    for n in foreign:
        value = getattr(fn, "__globals__", {}).get(n)
        if inspect.ismodule(value) and value.__name__.split(".")[0] == "torch":
            aliases[n] = value.__name__
    foreign = [n for n in foreign if n not in aliases]
    if foreign:
        raise Unrecordable(f"{what} {fn.__module__}.{fn.__qualname__} uses {', '.join(foreign)} of op_db's module")
    if fn.__name__ == "<lambda>" and not closure:
        if not aliases:
            return text
        bound = ", ".join(f"{n}={module}" for n, module in sorted(aliases.items()))
        return f"(lambda {bound}: {text})()"
    imports = [f"import {module} as {n}" for n, module in sorted(aliases.items())]
    if not closure:
        return "\n".join(imports + [ast.unparse(tree)]) + f"\n{DEF_MARK}{fn.__name__}"
    # a closure: its values bound in a maker function that returns it
    maker = f"_make_{re.sub(r'[^A-Za-z0-9_]', '_', fn.__qualname__)}"
    body = imports + closure + ([f"return {text}"] if fn.__name__ == "<lambda>" else
                                [ast.unparse(tree), f"return {fn.__name__}"])
    return f"def {maker}():\n" + textwrap.indent("\n".join(body), "    ") + f"\n{DEF_MARK}{maker}()"


def _closure_lines(fn, what) -> list:
    """Statements that bind a closure's free variables to their values: literals, or functions spelled by
    source_of; Unrecordable for anything else."""
    lines = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            raise Unrecordable(f"{what} {fn.__qualname__}: its free variable {name} is unbound") from None
        if value is None or isinstance(value, (bool, int, float, str)) or (
                isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value)):
            lines.append(f"{name} = {value!r}")
            continue
        if callable(value):
            inner = source_of(value, f"{what}'s {name}")
            if DEF_MARK in inner:
                body, _, expr = inner.rpartition(DEF_MARK)
                lines += body.rstrip().splitlines() + [f"{name} = {expr.strip()}"]
            else:
                lines.append(f"{name} = {inner}")
            continue
        raise Unrecordable(f"{what} {fn.__module__}.{fn.__qualname__} is a closure over {name}, "
                           f"a {type(value).__name__}: its value has no source form")
    return lines


# ------------------------------------------------------------------------------------------------ the values

class _Encoder:
    def __init__(self):
        self.tensors = []

    def tensor(self, t) -> dict:
        import torch
        if t.layout != torch.strided or t.is_nested:
            raise Unrecordable(f"a {t.layout} tensor: only strided tensors are recorded")
        self.tensors.append(t.detach().cpu().clone().requires_grad_(t.requires_grad))
        return {"tensor": len(self.tensors) - 1}

    def value(self, v):
        import torch
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return {"float": repr(v)}
        if isinstance(v, complex):
            return {"complex": [repr(v.real), repr(v.imag)]}
        if isinstance(v, torch.Size):
            return {"size": list(v)}
        if isinstance(v, (tuple, list)):
            return {type(v).__name__: [self.value(x) for x in v]}
        if isinstance(v, dict):
            return {"dict": [[k, self.value(x)] for k, x in v.items()]}
        if isinstance(v, torch.dtype):
            return {"attr": str(v)}
        if isinstance(v, (torch.memory_format, torch.layout)):
            return {"attr": str(v)}
        if isinstance(v, torch.device):
            return {"device": str(v)}
        if isinstance(v, slice):
            return {"slice": [self.value(v.start), self.value(v.stop), self.value(v.step)]}
        if v is Ellipsis:
            return {"ellipsis": True}
        raise Unrecordable(f"an argument of type {type(v).__name__} ({v!r:.80})")


def tensor_doc(t) -> dict:
    import torch
    real = torch.view_as_real(t.detach()) if t.is_complex() else t.detach()
    data = real.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "requires_grad": t.requires_grad,
            "data": base64.b64encode(data).decode("ascii")}


def tensor_from_doc(doc):
    import torch
    dtype = getattr(torch, doc["dtype"])
    raw = base64.b64decode(doc["data"])
    real_dtype = {torch.complex64: torch.float32, torch.complex128: torch.float64,
                  torch.complex32: torch.float16}.get(dtype, dtype)
    shape = list(doc["shape"]) + ([2] if dtype.is_complex else [])
    flat = torch.frombuffer(bytearray(raw), dtype=real_dtype) if raw else torch.empty(0, dtype=real_dtype)
    t = flat.reshape(shape).clone()
    t = torch.view_as_complex(t) if dtype.is_complex else t
    return t.requires_grad_(bool(doc.get("requires_grad")))


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)


def build(op, case, index, cpu_sample, variant, check, tol, grad_outputs, seed, kind="mismatch", before=()) -> dict:
    """The record of one failing sample (raises Unrecordable); `kind`: "mismatch" (the results differ) or
    "raised" (the device raised: the script is the call alone). `before`: (index, seed, CPU sample) of the
    samples the device ran before it in the case, at most BEFORE_MAX, the last ones: the script runs them on the
    device first, as the case did (a device that reuses a compiled graph for another argument fails only after
    them: torch_xla's pixel_shuffle, pytorch/xla#8353's class)."""
    import torch

    fn = {"function": op.op, "out": op.op, "inplace": op.inplace_variant}[variant] if variant in (
        "function", "out", "inplace") else None
    if fn is None:
        raise Unrecordable(f"the {variant} variant has no standalone call")
    call = source_of(fn, "the op's callable")
    process = None
    process_fn = getattr(cpu_sample, "output_process_fn_grad", None)
    if process_fn is not None and not getattr(process_fn, "__qualname__", "").startswith("SampleInput."):
        process = source_of(process_fn, "the sample's output_process_fn_grad")
    enc = _Encoder()
    structure = {"input": enc.value(cpu_sample.input), "args": enc.value(tuple(cpu_sample.args)),
                 "kwargs": enc.value(dict(cpu_sample.kwargs)),
                 "grad_outputs": enc.value(list(grad_outputs or []))}
    replayed = [{"sample": i, "seed": s, "structure": {"input": enc.value(b.input), "args": enc.value(tuple(b.args)),
                                                     "kwargs": enc.value(dict(b.kwargs))}}
                for i, s, b in list(before)[-BEFORE_MAX:]]
    details = case["details"]
    return {"schema": SCHEMA, "version": VERSION, "case": case["id"], "kind": kind, "op": details["op"], "sample": index,
            "check": check, "variant": variant, "call": call, "process": process,
            "device_kind": details["device_kind"], "device": str(case.get("device", "")),
            "dtype": details["dtype"], "rtol": tol.rtol, "atol": tol.atol, "tolerance_source": tol.source,
            "tf32": {"matmul": bool(torch.backends.cuda.matmul.allow_tf32),
                     "cudnn": bool(torch.backends.cudnn.allow_tf32)},
            "seed": seed, "torch": torch.__version__, "structure": structure, "before": replayed,
            "tensors": enc.tensors}


def _without_before(record) -> dict:
    """The record without the samples before the failing one (a record too large to be inline with them)."""
    used = set()

    def walk(node):
        if isinstance(node, dict):
            if set(node) == {"tensor"}:
                used.add(node["tensor"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(record["structure"])
    order = sorted(used)
    new_index = {old: new for new, old in enumerate(order)}

    def renumber(node):
        if isinstance(node, dict):
            if set(node) == {"tensor"}:
                return {"tensor": new_index[node["tensor"]]}
            return {k: renumber(v) for k, v in node.items()}
        if isinstance(node, list):
            return [renumber(v) for v in node]
        return node
    return dict(record, structure=renumber(record["structure"]), tensors=[record["tensors"][i] for i in order],
                before=[], before_left_out=len(record["before"]))


def store(case, record) -> None:
    """The record into the case: inline (details.repro_sample) or a file in the export folder."""
    import torch

    details = case["details"]
    details["reproduce"] = f"crossdev repro BUNDLE '{case['id']}' (BUNDLE: this run's --out; docs/repro.md)"
    nbytes = sum(t.numel() * t.element_size() for t in record["tensors"])
    if nbytes > INLINE_BYTES and record.get("before") and not os.environ.get(EXPORT_ENV):
        record = _without_before(record)  # the failing sample alone, inline, rather than no script
        nbytes = sum(t.numel() * t.element_size() for t in record["tensors"])
    if nbytes <= INLINE_BYTES:
        doc = dict(record, tensors=[tensor_doc(t) for t in record["tensors"]])
        details["repro_sample"] = json.dumps(doc, separators=(",", ":"))
        return
    export = os.environ.get(EXPORT_ENV)
    if not export:
        details.pop("reproduce")
        details["repro"] = (f"the failing sample's tensors ({nbytes} bytes) are larger than a bundle records "
                            f"inline ({INLINE_BYTES}): rerun with `crossdev run --export-samples DIR` to record them")
        return
    folder = os.path.join(export, "repro")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, _safe(case["id"]) + ".pt")
    torch.save(record, path + ".tmp")
    os.replace(path + ".tmp", path)
    details["repro_sample_file"] = path


def record(op, case, index, cpu_sample, variant, check, tol, grad_outputs, seed, kind="mismatch", before=()) -> None:
    """Record the first failing sample of `case` once; a failure to record is said in details.repro."""
    details = case["details"]
    if "repro_sample" in details or "repro_sample_file" in details or "repro" in details:
        return
    try:
        store(case, build(op, case, index, cpu_sample, variant, check, tol, grad_outputs, seed, kind, before))
    except Unrecordable as e:
        details["repro"] = f"no standalone script: {e}"
    except Exception as e:  # noqa: BLE001  a record is evidence for later: it never changes the case's verdict
        details["repro"] = f"no standalone script: recording the sample raised {type(e).__name__}: {str(e)[:200]}"


def record_model_op(case, repro, seed=0) -> None:
    """A models case's first divergent ATen op (localise.first_op) with the CPU golden's inputs to it, as the
    same record: the script calls torch.ops.<op> on both sides (docs/repro.md, "Models cases")."""
    import torch

    details = case["details"]
    try:
        if repro is None or repro.get("func") is None:
            raise Unrecordable("localisation named no single ATen op out of tolerance")
        args, kwargs = repro["inputs"]
        if not args:
            raise Unrecordable(f"{repro['func']} was called without positional arguments")
        enc = _Encoder()
        structure = {"input": enc.value(args[0]), "args": enc.value(tuple(args[1:])), "kwargs": enc.value(dict(kwargs)),
                     "grad_outputs": enc.value([])}
        record = {"schema": SCHEMA, "version": VERSION, "case": case["id"], "kind": "mismatch",
                  "op": f"aten op #{repro['index']} of the first divergent module {details.get('first_divergence', '')} "
                        f"({repro['phase']})", "sample": repro["index"], "check": "forward", "variant": "function",
                  "call": "torch.ops." + str(repro["func"]), "process": None,
                  "device_kind": details["device_kind"], "device": str(case.get("device", "")), "dtype": details["dtype"],
                  "rtol": repro["rtol"], "atol": repro["atol"],
                  "tolerance_source": "crossdev per-dtype table (the models suite's first rule; its float64 rule "
                                      "only forgives, and the case failed it too)",
                  "tf32": {"matmul": bool(torch.backends.cuda.matmul.allow_tf32),
                           "cudnn": bool(torch.backends.cudnn.allow_tf32)},
                  "seed": seed, "torch": torch.__version__, "structure": structure, "tensors": enc.tensors}
        store(case, record)
    except Unrecordable as e:
        details["repro"] = f"no standalone script: {e}"
    except Exception as e:  # noqa: BLE001  evidence for later: never the case's verdict
        details["repro"] = f"no standalone script: recording the op raised {type(e).__name__}: {str(e)[:200]}"
