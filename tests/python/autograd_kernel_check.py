"""crossdev's autograd-registration check, for every device: opcheck's own
(torch.testing._internal.optests.autograd_registration_check) raises NotImplementedError for any
device but cpu, cuda and xpu, so on `sim` (PrivateUse1) it cannot run.

The check: a call whose tensor inputs require grad must reach an autograd kernel at the autograd
key of its device (AutogradCPU, AutogradCUDA, AutogradPrivateUse1, ...): a kernel registered at
that key, at the Autograd alias, or a CompositeImplicitAutograd decomposition. It reads the
dispatcher's computed table (torch._C._dispatch_dump_table), which is what the dispatcher runs,
so a key that lands on the backend fallback (the autograd fallback: PyTorch's not-implemented
warning at backward, or silently no gradient) fails. Upstream's check is more lenient there: it
passes an op without an autograd kernel whose outputs do not require grad. tests/python/
test_opcheck.py shows this one turning red on an op that has a PrivateUse1 kernel and no
autograd kernel.
"""
import torch
import torch.utils._pytree as pytree

# What _dispatch_dump_table prints after the kernel of a key that reaches an autograd kernel:
# registered at the key itself, at the Autograd alias, or a CompositeImplicitAutograd kernel.
AUTOGRAD_KERNEL_KINDS = ("[kernel]", "[autograd kernel]", "[math kernel]")


def autograd_key(device_type):
    if device_type == torch._C._get_privateuse1_backend_name():
        return "AutogradPrivateUse1"
    keys = {"cpu": "AutogradCPU", "cuda": "AutogradCUDA", "xpu": "AutogradXPU", "mps": "AutogradMPS"}
    if device_type not in keys:
        raise NotImplementedError(f"autograd_kernel_check: no autograd key known for device type {device_type!r}")
    return keys[device_type]


def kernel_at(op, key):
    """The line of the op's computed dispatch table for `key`, or None."""
    for line in torch._C._dispatch_dump_table(op.name()).splitlines():
        if line.startswith(key + ":"):
            return line
    return None


def autograd_kernel_check(op, args, kwargs=None):
    """Raises AssertionError naming the op when its call on these arguments, some of which require
    grad, reaches no autograd kernel on their device."""
    flat = pytree.arg_tree_leaves(*args, **(kwargs or {}))
    tensors = [a for a in flat if isinstance(a, torch.Tensor)]
    if not any(t.requires_grad for t in tensors):
        raise RuntimeError(f"autograd_kernel_check({op.name()}): no input requires grad; nothing to check")
    device_types = {t.device.type for t in tensors}
    if len(device_types) != 1:
        raise RuntimeError(f"autograd_kernel_check({op.name()}): inputs on several device types {sorted(device_types)}")
    key = autograd_key(device_types.pop())
    line = kernel_at(op, key)
    if line is None or not line.rstrip().endswith(AUTOGRAD_KERNEL_KINDS):
        raise AssertionError(
            f"{op.name()}: inputs require grad but the dispatcher reaches no autograd kernel at {key} "
            f"({line or 'no entry'}); register a torch::autograd::Function at the Autograd key, or use "
            f"torch.library.register_autograd")
