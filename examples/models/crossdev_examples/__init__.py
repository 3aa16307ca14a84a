"""Example models for `crossdev.compare_model` and `suite: models` rows (docs/models.md).

Put examples/models on the path (PYTHONPATH, `--crossdev-import`'s sys.path, `crossdev run --import`)
and name a factory `crossdev_examples.<module>:<callable>`. Each factory takes no arguments, builds
on the CPU from a fixed seed and returns (model, inputs); each has a `_fused` twin calling
crossdev's fused ops through torch.ops.crossdev, so those kernels are judged inside real models.
"""
