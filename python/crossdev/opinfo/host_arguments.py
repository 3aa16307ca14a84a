"""Sample arguments that stay on the CPU when the sample is moved to the device: the op's own contract
requires a host tensor there on every device, so moving it would test the harness, not the device.
One table, each entry with its reason (docs/opinfo.md)."""
from __future__ import annotations

import torch

# (OpInfo name, index into sample.args, why that argument is a CPU tensor on every device)
HOST_ARGUMENTS = (
    ("tensor_split", 0, "tensor_indices_or_sections must be a CPU tensor on every device (ATen: 'tensor_split "
                        "expected tensor_indices_or_sections to be on cpu'); test_mps.py's TestConsistency "
                        "keeps it on the CPU too"),
)


def keep_on_host(op, cpu_sample, device_sample):
    """`device_sample` with the arguments of HOST_ARGUMENTS taken back from `cpu_sample`."""
    for name, index, _ in HOST_ARGUMENTS:
        if op.name == name and index < len(cpu_sample.args) and isinstance(cpu_sample.args[index], torch.Tensor):
            args = list(device_sample.args)
            args[index] = cpu_sample.args[index]
            device_sample.args = tuple(args)
    return device_sample
