"""Hugging Face accelerate's device choice, as a user's training script gets it: the
`hf-accelerate` preset models `PartialState().device` (docs/redirect-policy.md), checked on every
host in test_pytest_plugin_real_pickers.py. `accelerate` is imported at module level, as users
do: its import-time torch_xla check must see the simulated host too."""
from accelerate import PartialState


def partial_state_device():
    """What `Accelerator()` and `PartialState()` put models on: the XLA device when torch_xla is
    present, else `default_device` (MPS > CUDA > XPU > CPU, plus accelerators crossdev does not model)."""
    return PartialState().device


def default_device():
    """`PartialState().default_device`: no XLA branch, so not what the preset models."""
    return PartialState().default_device
