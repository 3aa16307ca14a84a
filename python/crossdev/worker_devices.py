"""Where a Python suite's case runs: the device string for a device kind, given how the engine
reports that kind on this host (the request's "kinds": real, simulated or absent)."""
from __future__ import annotations


def device_for(kind: str, provenance: str):
    """(device string, execution) for a device kind on this host, or (None, why it does not run)."""
    if provenance == "real":
        return (kind if kind == "cpu" else f"{kind}:0"), "real"
    if provenance == "simulated":
        import crossdev
        return crossdev.sim.device_for(kind)["device"], "simulated"
    return None, f"device not present (simulate it with --simulate {kind})"
