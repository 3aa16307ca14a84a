"""The `opinfo` suite: any ATen operator PyTorch's own OpInfo database (op_db) describes, on a device,
against the CPU in the same dtype (docs/opinfo.md). Run by the engine through `crossdev.worker`.

  selection.py      which OpInfos a row's glob selects; bad names with the nearest matches
  op_names.py       op_db's names cached per torch install: the engine's check without importing op_db
  seeding.py        seeds without torch.manual_seed's lazy seeding of runtimes that cannot start
  kernel_source.py  which kernel a case ran on sim (composite, CPU fallback, sim's own), once per op
  tolerances.py     crossdev's per-dtype table, then op_db's tolerance overrides of the reference test
  op_db_decorators.py  op_db's decorators for the case's reference test (test_compare_cpu / TestConsistency)
  open_contract.py  values, orders, ties, outputs and signs the contract leaves open: canonical forms
  random_ops.py     random ops found at run time (a dispatch mode), compared by distribution
  float64_diagnostic.py  the float64 run of a sample outside tolerance, decided by crossdev.float64_rule
  expectations.py   skip entries of matrices/expectations/opinfo/<kind>.yaml, applied before a case runs
  samples.py        one sample on the device and on the CPU, forward or backward, compared
  compile_variant.py  the `compile` variant: torch.compile (Inductor) against eager on the same samples
  cpu_capability.py   the CPU-capability axis: samples serialised once, one process per ATEN_CPU_CAPABILITY
  capability_worker.py  that process (`python -m crossdev.opinfo.capability_worker`)
  repro_record.py   a failing case's first failing sample, recorded for `crossdev repro` (docs/repro.md)
  suite.py          the worker's check/run requests: rows -> cases
"""
