"""Seed 004's device picker, copied verbatim from seed 004 (shared/seeds/004_289ca5dc2ffb7b3f.txt beside the checkout)
("MPS Support - Changes Summary", pretrain.py, "Added Device Detection"), so the plugin can
check it as written against the cuda-first preset (test_pytest_plugin_picker.py)."""
import torch


def get_device():
    """Get the best available device (CUDA, MPS, or CPU)"""
    if torch.cuda.is_available():
        return "cuda"
    elif torch.backends.mps.is_available():
        return "mps"
    else:
        return "cpu"
