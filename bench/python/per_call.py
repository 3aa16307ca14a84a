"""The per-call figure (issue 23): what one call costs at the smallest realistic size, where the
kernel is nothing and the dispatcher, argument parsing and allocation are everything.

Per op (matrices/bench/sweep.yaml `per_call`): one allocating call of the op on its `shape_set` inputs
through `crossdev.functional.<op>(...)` (impl `functional`: crossdev's Python call, the one the target
is on) and through `torch.ops.crossdev.<op>(...)` (impl `fused`: the OpOverloadPacket), one
`torch.add(x, x)` and one `torch.ops.aten.add.Tensor(x, x)` on the op's main tensor x (its first
tensor argument). torch.add is the cheapest ATen call a user makes; torch.ops.aten.add.Tensor goes
through the same torch.ops Python path as torch.ops.crossdev, so the two show which share of the gap
is the OpOverload's Python and which is crossdev's. All on `threads` ATen threads (restored after):
at this size a thread pool only adds its hand-off.

An op's impls are timed interleaved (timing.measure_interleaved): each repetition runs all of them in
turn, so host noise cannot slow torch.add's run and spare the op's, and the ratio the target reads
compares calls made at the same moments.

An op with dropout (a `training` argument) is timed at training=False: the figure is its call path, as
for every other op, and as in inference, where calls this small are latency-bound. Its training call is
timed beside it (impl functional.train), reported and not held to the target: it also draws a stream from
torch's generator and hashes the portable mask of every element (ops/portable_random.h, identical on the
CPU, on CUDA and in the composite kernel), work that grows with the tensor; the sweep's 1K row holds that
call to the ATen expression with F.dropout.

Names: "<op>/<impl>/<dtype>/<shape>/cpu/call", impl functional | fused | torch.add | aten.add |
functional.train, shape e.g. 2x8x64.
"""
import importlib
import math

PASS = "call"
IMPLS = ("functional", "fused", "torch.add", "aten.add")
TRAINING_IMPL = "functional.train"  # an op with dropout: its training call, beside the call path


def op_inputs(torch, crossdev, op, spec, training=False):
    """(positional args, keyword args, main tensor) for one call of the op at spec's inputs; `training` for an
    op with dropout (True: the inputs' own setting)."""
    made = crossdev.ops.make_inputs(op, spec.shape_set, getattr(torch, spec.dtype), "cpu", 0)
    tensors = made["tensors"]
    schema = getattr(torch.ops.crossdev, op).default._schema
    main = next(a.name for a in schema.arguments if a.name in tensors)
    shape, numel = tuple(tensors[main].shape), math.prod(spec.shape)
    # Same-shape ops (gelu_tanh, swiglu) have bigger basic sets than the others' x; cut them to spec.shape.
    same_shape = all(tuple(t.shape) == shape for t in tensors.values())
    if shape != spec.shape and same_shape and tensors[main].numel() >= numel:
        tensors = {n: t.flatten()[:numel].view(spec.shape) for n, t in tensors.items()}
    values = dict(tensors, **made["scalars"], training=made["training"] and training, seed=made["seed"])
    args, kwargs = [], {}
    for arg in schema.arguments:
        if arg.name in values:
            value = values[arg.name]
        elif arg.has_default_value():
            value = arg.default_value
        else:
            continue
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return args, kwargs, tensors[main]


def steps(torch, crossdev, op, spec):
    """(shape label, main tensor's elements, {impl: zero-argument step}) for one op."""
    args, kwargs, x = op_inputs(torch, crossdev, op, spec)
    packet = getattr(torch.ops.crossdev, op)
    function = getattr(importlib.import_module("crossdev.functional"), op)
    add = torch.ops.aten.add.Tensor

    def bound(fn, args, kwargs):  # no `**{}` when nothing goes by keyword: the figure is the call, not Python's unpacking
        return (lambda: fn(*args, **kwargs)) if kwargs else (lambda: fn(*args))

    timed = {
        "functional": bound(function, args, kwargs),
        "fused": bound(packet, args, kwargs),
        "torch.add": lambda: torch.add(x, x),
        "aten.add": lambda: add(x, x),
    }
    if any(a.name == "training" for a in packet.default._schema.arguments):
        train_args, train_kwargs, _ = op_inputs(torch, crossdev, op, spec, training=True)
        timed[TRAINING_IMPL] = bound(function, train_args, train_kwargs)
    return "x".join(str(d) for d in x.shape), x.numel(), timed


def name_of(op, impl, dtype, shape_label):
    return f"{op}/{impl}/{dtype}/{shape_label}/cpu/{PASS}"


def measure(torch, crossdev, timing, spec, ops, wanted=lambda name: True):
    """[(name, Measurement or error text, elements)] for every op and impl, on spec.threads ATen threads."""
    rows = []
    threads = torch.get_num_threads()
    torch.set_num_threads(spec.threads)
    try:
        for op in ops:
            try:
                label, elements, op_steps = steps(torch, crossdev, op, spec)
            except Exception as exc:  # noqa: BLE001  (reported per figure, like the driver's cases)
                rows += [(name_of(op, impl, spec.dtype, spec.shape_set), f"{type(exc).__name__}: {exc}", 0)
                         for impl in IMPLS]
                continue
            chosen = {impl: step for impl, step in op_steps.items() if wanted(name_of(op, impl, spec.dtype, label))}
            try:
                measured = timing.measure_interleaved(chosen, spec.repetitions, spec.min_time)
            except Exception:  # noqa: BLE001  (an impl that raises: each impl alone, to name the one)
                measured = {}
                for impl, step in chosen.items():
                    try:
                        measured[impl] = timing.measure(step, spec.repetitions, spec.min_time)
                    except Exception as err:  # noqa: BLE001
                        measured[impl] = f"{type(err).__name__}: {err}"
            rows += [(name_of(op, impl, spec.dtype, label), m, elements) for impl, m in measured.items()]
    finally:
        torch.set_num_threads(threads)
    return rows
