"""The portable inputs of a crossdev op as the positional arguments of torch.ops.crossdev.<op>,
read off the registered schema (Tensor arguments are inputs, `training` the call's flag, other
scalars the shape set's values or the schema default: `generator` stays None, so a random op draws
from the device's default generator and torch.manual_seed, which opcheck calls before each run,
reproduces it)."""
import torch

import crossdev


def op_arguments(op, shape_set, dtype, device, requires_grad=False):
    made = crossdev.ops.make_inputs(op, shape_set, dtype, device, 0)
    grad_inputs = set(crossdev.ops.grad_inputs(op))
    args = []
    for arg in getattr(torch.ops.crossdev, op).default._schema.arguments:
        if "Tensor" in str(arg.type):
            t = made["tensors"].get(arg.name)
            if t is not None and requires_grad and arg.name in grad_inputs and t.is_floating_point():
                t = t.detach().requires_grad_(True)
            args.append(t)
        elif arg.name == "training":
            args.append(made["training"])
        else:
            args.append(made["scalars"].get(arg.name, arg.default_value))
    return args
