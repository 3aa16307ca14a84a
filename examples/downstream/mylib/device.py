"""The device picker as seed 004 (TinyRecursiveModels' MPS port) wrote it."""
import torch


def get_device():
    """Get the best available device (CUDA, MPS, or CPU)"""
    if torch.cuda.is_available():
        return "cuda"
    elif torch.backends.mps.is_available():
        return "mps"
    else:
        return "cpu"
