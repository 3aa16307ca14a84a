"""A device's exception as a result: its text, and crossdev's classification (seed 003's classes)
with the recovery it suggests, when the error classifier recognises it."""
from __future__ import annotations


def describe(exc: BaseException) -> dict:
    text = f"{type(exc).__name__}: {exc}".strip()
    first_line = text.splitlines()[0] if text else type(exc).__name__
    out = {"exception": type(exc).__name__, "text": text, "summary": first_line, "category": None, "recovery": [],
           "recovery_text": ""}
    try:
        from crossdev import manager
        found = manager.classify(str(exc), exception=type(exc).__name__)
    except Exception:  # noqa: BLE001  no classifier: the text alone
        found = None
    if found:
        out["category"] = found["category"]
        out["recovery"] = [list(stage) for stage in found["recovery"]]  # stages, each a list of actions
        out["recovery_text"] = " then ".join(" + ".join(stage) for stage in out["recovery"])
    return out
