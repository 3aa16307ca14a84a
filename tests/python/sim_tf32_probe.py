"""How far sim under the cuda profile moves mm and conv2d when PyTorch's TF32 flags are on (a JSON line on stdout:
the largest difference on vs off per op). Run in a process of its own by test_models_numerics.py, since it
registers sim (test_sim_registration_sites.py)."""
import json, os, torch, crossdev
crossdev.sim.register()
device = crossdev.sim.device_for("cuda")["device"]
torch.manual_seed(0)
a, b, w = torch.randn(64, 64), torch.randn(64, 64), torch.randn(8, 3, 3, 3)
x = torch.randn(2, 3, 8, 8)
def largest(flag_on):
    mm = lambda: (a.to(device) @ b.to(device)).cpu()
    conv = lambda: torch.nn.functional.conv2d(x.to(device), w.to(device)).cpu()
    out = {}
    for name, f, set_flag in (("mm", mm, lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v)),
                              ("convolution", conv, lambda v: setattr(torch.backends.cudnn, "allow_tf32", v))):
        set_flag(flag_on)
        out[name] = f()
    return out
on, off = largest(True), largest(False)
print(json.dumps({k: float((on[k] - off[k]).abs().max()) for k in on}))
os._exit(0)
