"""`suite: claims` (matrices/claims.yaml, docs/xla.md): a seed's claims about a device's runtime,
checked by running them on the device, real where the host has it (torch_xla's xla on any CPU host).

  table.py   the claims, one record each: its source, what it observes, the outcomes it can report
  seed001.py seed 001's claims (inference_mode against no_grad, device strings, autocast device
             types, torch.compile backends, the version-counter error classified and recovered)
  suite.py   the worker's side of the rows: check, plan, run (one case per row x device kind)
"""
