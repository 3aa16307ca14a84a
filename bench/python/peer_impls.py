"""The implementations peer_bench.py times for one case, each a zero-argument step on shared inputs.

  fused.out  torch.ops.crossdev.<op>.out into a preallocated output (kernel only; fwd)
  fused      torch.ops.crossdev.<op>: the allocating call users make (fwd_bwd: with autograd)
  fallback   the op's CompositeExplicitAutograd composition (crossdev.ops.run(op, "fallback", ...)),
             autograd through ATen's ops
  aten.out   matrices/bench/peers.yaml `aten_out` into a preallocated output (fwd, where given)
  aten       matrices/bench/peers.yaml `aten`: the best native ATen expression
  compile    torch.compile (Inductor) of bench/python/op_formulas.py, the reference composition
A fwd_bwd step runs the forward, then backward with a ones grad_out, and drops the gradients.
"""
import pathlib

import yaml_input
from yaml_input import InputError

ROOT = pathlib.Path(__file__).resolve().parents[2]
PEERS_PATH = ROOT / "matrices" / "bench" / "peers.yaml"
FWD_IMPLS = ("fused.out", "fused", "fallback", "aten.out", "aten", "compile")
FWD_BWD_IMPLS = ("fused", "fallback", "aten", "compile")


# What an expression in peers.yaml may call besides torch, F and the inputs.
_BUILTINS = {"float": float, "int": int, "slice": slice, "tuple": tuple, "len": len}




def load_peers(path=PEERS_PATH):
    """{op: {"aten": expr, "aten_out": expr?, "aten_out_note": text?}}, each expression compiled once."""
    doc = yaml_input.load(path)
    if not isinstance(doc, dict) or doc.get("suite") != "bench_peers" or not isinstance(doc.get("peers"), dict):
        raise InputError(f"{path}: expected suite: bench_peers and a `peers` mapping of op -> {{aten, aten_out}}")
    peers = {}
    for op, row in doc["peers"].items():
        if not isinstance(row, dict) or not isinstance(row.get("aten"), str):
            raise InputError(f"{path}: peers.{op}: expected a mapping with a string `aten` expression")
        unknown = set(row) - {"aten", "aten_out", "aten_out_note"}
        if unknown:
            raise InputError(f"{path}: peers.{op}: unknown key(s) {', '.join(sorted(unknown))}; "
                             "expected aten, aten_out, aten_out_note")
        entry = dict(row)
        for key in ("aten", "aten_out"):
            if key in row:
                try:
                    entry[key + "_code"] = compile(row[key], f"{path}:peers.{op}.{key}", "eval")
                except SyntaxError as exc:
                    raise InputError(f"{path}: peers.{op}.{key}: not a Python expression: {exc.msg}") from None
        peers[op] = entry
    return peers


def schema_kwargs(torch, op, tensors, scalars, training, seed):
    """The op's arguments by schema name: defaults, then the bench's scalars and tensors."""
    schema = getattr(torch.ops.crossdev, op).default._schema
    values = dict(tensors, **scalars, training=training, seed=seed)
    kwargs = {}
    for arg in schema.arguments:
        if arg.name in values:
            kwargs[arg.name] = values[arg.name]
        elif arg.has_default_value():
            kwargs[arg.name] = arg.default_value
    return kwargs


class CaseInputs:
    """One (op, elements, dtype, pass) input set on `device`, shared by every impl (as the C++ bench
    shares it). The bits are made on the CPU (the portable generator, as the C++ bench's) and copied
    to the device, so every device times the same values."""

    def __init__(self, torch, crossdev, op, elements, dtype, seed, pass_name, device="cpu"):
        made = crossdev.bench.make_inputs(op, elements, dtype, "cpu", seed)
        grads = set(crossdev.bench.grad_inputs(op)) if pass_name == "fwd_bwd" else set()
        self.op, self.pass_name, self.torch, self.crossdev = op, pass_name, torch, crossdev
        self.device = torch.device(device)
        self.tensors = {n: t.detach().to(self.device).requires_grad_(n in grads) for n, t in made["tensors"].items()}
        self.scalars, self.training, self.seed = made["scalars"], made["training"], made["seed"]
        self.kwargs = schema_kwargs(torch, op, self.tensors, self.scalars, self.training, self.seed)
        with torch.no_grad():
            self.out = getattr(torch.ops.crossdev, op)(**self.kwargs)  # shape, dtype and the traffic model
        self.grad_out = torch.ones_like(self.out) if pass_name == "fwd_bwd" else None

    def names(self):
        return sorted(self.tensors)

    def scope(self):
        return dict(self.kwargs, torch=self.torch, F=self.torch.nn.functional)


def _step(inputs, forward):
    """The timed step: forward only, or forward + backward with the gradients dropped after."""
    if inputs.pass_name != "fwd_bwd":
        return forward
    leaves = [t for t in inputs.tensors.values() if t.requires_grad]

    def step():
        forward().backward(inputs.grad_out)
        for t in leaves:
            t.grad = None
    return step


def build_steps(inputs, peers, formulas, impls, compile_enabled=True):
    """{impl: step} for the impls this case has; {impl: reason} for the ones it has not."""
    torch, crossdev, op = inputs.torch, inputs.crossdev, inputs.op
    fwd = inputs.pass_name != "fwd_bwd"
    steps, missing = {}, {}
    packet = getattr(torch.ops.crossdev, op)
    kwargs = inputs.kwargs
    peer = peers.get(op, {})
    for impl in impls:
        if impl in ("fused.out", "aten.out") and not fwd:
            continue
        if impl == "fused.out":
            out = torch.empty_like(inputs.out)
            steps[impl] = lambda out=out: packet.out(**kwargs, out=out)
        elif impl == "fused":
            steps[impl] = _step(inputs, lambda: packet(**kwargs))
        elif impl == "fallback":
            tensors, scalars = inputs.tensors, inputs.scalars
            steps[impl] = _step(inputs, lambda: crossdev.ops.run(op, "fallback", tensors, scalars,
                                                                  inputs.training, inputs.seed))
        elif impl == "aten.out":
            if "aten_out_code" not in peer:
                missing[impl] = f"no aten_out expression for {op} in matrices/bench/peers.yaml"
                continue
            scope = dict(inputs.scope(), out=torch.empty_like(inputs.out))
            code = peer["aten_out_code"]
            steps[impl] = lambda code=code, scope=scope: eval(code, {"__builtins__": _BUILTINS}, scope)  # noqa: S307
        elif impl == "aten":
            if "aten_code" not in peer:
                missing[impl] = f"no aten expression for {op} in matrices/bench/peers.yaml"
                continue
            scope, code = inputs.scope(), peer["aten_code"]
            steps[impl] = _step(inputs, lambda code=code, scope=scope: eval(code, {"__builtins__": _BUILTINS}, scope))  # noqa: S307
        elif impl == "compile":
            if not compile_enabled:
                missing[impl] = "torch.compile not run (--no-compile or its budget spent)"
                continue
            if op not in formulas:
                missing[impl] = f"no formula for {op} in bench/python/op_formulas.py"
                continue
            names, formula = inputs.names(), formulas[op]
            scalars, training = inputs.scalars, inputs.training
            # Every case compiles the same `call` code object: without a reset Dynamo would hit its
            # recompile limit after a few cases and silently run the formula eagerly.
            torch._dynamo.reset()

            def call(*tensors, names=names, formula=formula, scalars=scalars, training=training):
                return formula(dict(zip(names, tensors)), scalars, training)
            compiled = torch.compile(call, dynamic=False, fullgraph=True)
            args = [inputs.tensors[n] for n in names]
            steps[impl] = _step(inputs, lambda compiled=compiled, args=args: compiled(*args))
    return steps, missing
