"""Lightning's device choice with `accelerator="auto"`: `Fabric().device` (lightning_fabric, the
package Lightning's Trainer shares it with), which the `lightning` preset models
(`_choose_auto_accelerator`: TPU > MPS > CUDA > CPU); checked on every host in
test_pytest_plugin_real_pickers.py."""
from lightning_fabric import Fabric


def fabric_device():
    return Fabric().device
