"""A model factory: `module:callable`, taking no arguments, returning `(model, inputs)` (or a mapping
with at least `model` and `inputs`). Every problem is a FactoryError naming the factory and the
Python error, never a traceback from deep inside the comparison."""
from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass

EXAMPLE = "crossdev_examples.dit:tiny_dit_block"
TRAIN_CONTRACT = "loss(output, *inputs) -> scalar tensor, optimizer(parameters) -> torch.optim.Optimizer"


class FactoryError(ValueError):
    """The factory cannot be imported, raises, or returns the wrong thing."""


@dataclass
class Built:
    name: str
    model: object  # torch.nn.Module, on the CPU
    inputs: tuple  # tensors (and other values, passed as they are)
    loss: object = None  # train: loss(output, *inputs) -> scalar tensor (the mapping form only)
    optimizer: object = None  # train: optimizer(parameters) -> torch.optim.Optimizer
    steps: int | None = None  # train: optimizer steps (the mapping's, else the caller's)
    seed_policy: str | None = None  # a random forward: none | same_mask (the mapping's; randomness.py)


def load_factory(spec: str):
    """The callable named by `module:callable` (the callable may be dotted: `module:Class.make`)."""
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise FactoryError(f"model factory '{spec}': expected 'module:callable' (e.g. {EXAMPLE})")
    module_name, attribute = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001  any error of the user's module is reported as it is
        raise FactoryError(f"model factory '{spec}': cannot import module '{module_name}': "
                           f"{type(e).__name__}: {e} (is it on PYTHONPATH?)") from e
    try:
        factory = functools.reduce(getattr, attribute.split("."), module)
    except AttributeError as e:
        raise FactoryError(f"model factory '{spec}': module '{module_name}' has no attribute '{attribute}' ({e})") from e
    if not callable(factory):
        raise FactoryError(f"model factory '{spec}': '{attribute}' is a {type(factory).__name__}, not a callable")
    return factory


def factory_name(model_fn) -> str:
    if isinstance(model_fn, str):
        return model_fn
    module = getattr(model_fn, "__module__", None) or "?"
    return f"{module}:{getattr(model_fn, '__qualname__', repr(model_fn))}"


def build(model_fn) -> Built:
    """Call the factory (a callable or its `module:callable` name) and check what it returns."""
    import torch

    name = factory_name(model_fn)
    factory = load_factory(model_fn) if isinstance(model_fn, str) else model_fn
    if not callable(factory):
        raise FactoryError(f"model factory {name!r} is not callable (expected a callable or 'module:callable')")
    try:
        made = factory()
    except Exception as e:  # noqa: BLE001
        raise FactoryError(f"model factory '{name}' raised {type(e).__name__}: {e}") from e
    if isinstance(made, Mapping):
        missing = [k for k in ("model", "inputs") if k not in made]
        if missing:
            raise FactoryError(f"model factory '{name}' returned a mapping without {', '.join(missing)}; "
                               "expected keys model, inputs (and for train: loss, optimizer; optional steps, seed_policy)")
        model, inputs = made["model"], made["inputs"]
        train = {k: made.get(k) for k in ("loss", "optimizer", "steps", "seed_policy")}
        for key in ("loss", "optimizer"):
            if train[key] is not None and not callable(train[key]):
                raise FactoryError(f"model factory '{name}' returned a {type(train[key]).__name__} as its {key}; "
                                   f"expected a callable ({TRAIN_CONTRACT})")
        if train["seed_policy"] is not None:
            from .randomness import SEED_POLICIES
            if train["seed_policy"] not in SEED_POLICIES:
                raise FactoryError(f"model factory '{name}' returned seed_policy {train['seed_policy']!r}; "
                                   f"expected one of {', '.join(SEED_POLICIES)}")
    elif isinstance(made, tuple) and len(made) == 2:
        model, inputs = made
        train = {}
    else:
        raise FactoryError(f"model factory '{name}' returned {_describe(made)}; expected (model, inputs), "
                           "inputs a tuple of tensors")
    if not isinstance(model, torch.nn.Module):
        raise FactoryError(f"model factory '{name}' returned a {type(model).__name__} as its model; "
                           "expected a torch.nn.Module")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)) or not any(isinstance(t, torch.Tensor) for t in inputs):
        raise FactoryError(f"model factory '{name}' returned {_describe(inputs)} as inputs; expected a tuple of tensors")
    off_cpu = sorted({str(t.device) for t in list(model.parameters()) + list(model.buffers()) + list(inputs)
                      if isinstance(t, torch.Tensor) and t.device.type != "cpu"})
    if off_cpu:
        raise FactoryError(f"model factory '{name}' built on {', '.join(off_cpu)}; build on the CPU "
                           "(crossdev copies the model to each device)")
    return Built(name, model, tuple(inputs), **train)


def _describe(value) -> str:
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return f"a {type(value).__name__}"
