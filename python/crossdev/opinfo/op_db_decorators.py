"""op_db's decorators for the one PyTorch test an opinfo case stands for, and only that test.

A case of device kind K compares K with the CPU. PyTorch's test of that question is
`TestCommon.test_compare_cpu` (test/test_ops.py) for cuda, xpu, xla and any other device, and
`TestConsistency.test_output_match` (test/test_mps.py) for mps (REFERENCE_TEST). op_db attaches
decorators to an OpInfo in two ways: a bare decorator applies to every test of the op, a
`DecorateInfo` to the tests, device types, dtypes (and `active_if`) it names; `DecorateInfo.is_active`
decides, as PyTorch's `ops` decorator does. Of the decorators that apply, crossdev knows:

| decorator | what the case does |
|---|---|
| `unittest.skip(reason)` | `skip` with the reason, unless the reason is that the output is non-deterministic: crossdev compares random ops by distribution instead (random_ops.py), the case records the skip it did not take |
| `unittest.expectedFailure` | the case runs; a failure is `xfail` citing the decorator, a pass is `xpass` and gates (PyTorch's unexpected success). Where one of crossdev's own rules handles what PyTorch's comparison cannot (open outputs, canonical order or signs, ties, random ops by law), the decorator is not taken: the case is judged by that rule, a failure fails and a pass names the rule (suite.xfail_verdict) |
| `toleranceOverride`, `precisionOverride` | raise the tolerance for the dtype, never lower it (assertEqual takes the larger) |
| `onlyCPU`, `onlyCUDA`, `onlyNativeDeviceTypes`, `skipXPU`, `skipMPS` | declared unsupported on the kinds they exclude: `skip` counted as a declared gap |
| `with_tf32_off` | TF32 off for the case in every numerics mode (crossdev.numerics) |

Any other decorator (`skipCPUIfNoLapack`, `slowTest`, `disablecuDNN`, ...) is ignored, and the case
records its name as ignored (details.op_db_ignored).

The reference test compares forward results only (test_compare_cpu has no backward; neither has
TestConsistency.test_output_match's decorators a meaning for gradients): a `DecorateInfo` that names the
reference test applies to the forward case only. A backward case takes the decorators meant for every test
(bare ones, and DecorateInfos without a test name)."""
from __future__ import annotations

import unittest
from dataclasses import dataclass, field

REFERENCE_TEST = {"mps": ("TestConsistency", "test_output_match")}
# The device kinds whose reference test PyTorch's own CI runs with op_db's decorators: there an expectedFailure
# is evidence, and a pass is an unexpected success (xpass). Elsewhere (xla: pytorch/xla runs its own test lists)
# the decorator is PyTorch's evidence about other devices: a failure is still xfail, a pass is a pass that says so.
REFERENCE_CI_KINDS = ("cuda", "xpu", "mps")
DEFAULT_REFERENCE_TEST = ("TestCommon", "test_compare_cpu")
NONDETERMINISTIC = "non-deterministic"  # in op_db's skip reasons for random ops ("output is non-deterministic")
# bare decorators that say which device types the op's tests run on: kind -> runs there?
DEVICE_FILTERS = {
    "onlyCPU": lambda kind: kind == "cpu",
    "onlyCUDA": lambda kind: kind == "cuda",
    "onlyNativeDeviceTypes": lambda kind: kind in ("cpu", "cuda", "meta", "mps", "xpu", "mtia"),
    "skipXPU": lambda kind: kind != "xpu",
    "skipMPS": lambda kind: kind != "mps",
}
TF32_OFF = ("with_tf32_off",)


def reference_test(kind: str):
    return REFERENCE_TEST.get(kind, DEFAULT_REFERENCE_TEST)


@dataclass
class Rules:
    """What op_db's decorators say about one case (of the reference test `test`)."""
    test: tuple = DEFAULT_REFERENCE_TEST
    skip: str | None = None  # the reason, naming the decorator
    declared_gap: str | None = None  # a skip that is op_db declaring the op unsupported on the kind
    xfail: str | None = None  # the expectedFailure that applies, described
    tolerances: list = field(default_factory=list)  # (atol, rtol or None, where)
    tf32_off: str | None = None
    applied: list = field(default_factory=list)  # "name (where)" of each decorator that decided something
    not_taken: list = field(default_factory=list)  # skips crossdev replaces by a rule of its own
    ignored: list = field(default_factory=list)

    def describe(self) -> str:
        parts = []
        if self.applied:
            parts.append("applied: " + "; ".join(self.applied))
        if self.not_taken:
            parts.append("not taken: " + "; ".join(self.not_taken))
        return " | ".join(parts)


def _name(decorator) -> str:
    return getattr(decorator, "__qualname__", None) or getattr(decorator, "__name__", None) or type(decorator).__name__


def _effect(decorator):
    """('skip', reason) | ('xfail', None) | ('tolerance', d) | ('precision', d) | ('device', name) |
    ('tf32_off', name) | ('ignored', name): what a decorator does, found by applying it to a fresh function."""
    from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride

    if isinstance(decorator, toleranceOverride):
        return "tolerance", decorator.d
    if isinstance(decorator, precisionOverride):
        return "precision", decorator.d
    name = _name(decorator)
    if decorator is unittest.expectedFailure:
        return "xfail", None
    base = name.split(".")[0]
    if base in DEVICE_FILTERS:
        return "device", base
    if base in TF32_OFF:
        return "tf32_off", base
    if name.startswith("skip.") or name == "skip":  # unittest.skip(reason): a closure named skip.<locals>.decorator

        def probe():
            pass
        try:
            wrapped = decorator(probe)
        except Exception:  # noqa: BLE001
            return "ignored", name
        if getattr(wrapped, "__unittest_skip__", False) or getattr(probe, "__unittest_skip__", False):
            why = getattr(wrapped, "__unittest_skip_why__", None) or getattr(probe, "__unittest_skip_why__", "")
            return "skip", why
    return "ignored", name


def _applies(info, test, kind: str, dtype) -> bool:
    cls_name, test_name = test
    try:
        return bool(info.is_active(cls_name, test_name, kind, dtype, {}))
    except TypeError:  # torch < 2.1: is_active(cls_name, test_name, device_type, dtype)
        return bool(info.is_active(cls_name, test_name, kind, dtype))


def rules_for(op, kind: str, dtype, check: str = "forward") -> Rules:
    """The decorators of op_db that apply to `kind`'s reference test of `op` in `dtype`: for a backward case,
    only those meant for every test (the reference test compares forward results)."""
    test = reference_test(kind)
    rules = Rules(test=test)
    for entry in getattr(op, "decorators", ()) or ():
        if hasattr(entry, "decorators") and hasattr(entry, "is_active"):  # a DecorateInfo
            if not _applies(entry, test, kind, dtype):
                continue
            if check != "forward" and getattr(entry, "test_name", None):
                continue
            where = f"{entry.cls_name or '*'}.{entry.test_name or '*'}, device_type={entry.device_type or '*'}"
            decorators = entry.decorators
        else:
            where, decorators = "every test", (entry,)
        for decorator in decorators:
            _record(rules, _effect(decorator), where, kind, dtype)
    return rules


def _record(rules: Rules, effect, where: str, kind: str, dtype) -> None:
    what, value = effect
    if what == "skip":
        text = f"unittest.skip('{value}') ({where})"
        if NONDETERMINISTIC in (value or ""):
            rules.not_taken.append(f"{text}: crossdev compares random ops by distribution")
        elif rules.skip is None:
            rules.skip = f"op_db skips it for {'.'.join(rules.test)}: {text}"
            rules.applied.append(text)
    elif what == "xfail":
        rules.xfail = rules.xfail or f"unittest.expectedFailure ({where})"
        rules.applied.append(f"unittest.expectedFailure ({where})")
    elif what in ("tolerance", "precision"):
        if dtype in value:
            atol, rtol = (value[dtype].atol, value[dtype].rtol) if what == "tolerance" else (value[dtype], None)
            label = "toleranceOverride" if what == "tolerance" else "precisionOverride"
            rules.tolerances.append((atol, rtol, f"op_db {label} ({where})"))
            rules.applied.append(f"{label} ({where})")
    elif what == "device":
        if not DEVICE_FILTERS[value](kind) and rules.declared_gap is None:
            rules.declared_gap = f"declared unsupported by op_db: {value} ({where}) excludes {kind}"
            rules.applied.append(f"{value} ({where})")
    elif what == "tf32_off":
        rules.tf32_off = f"{value} ({where})"
        rules.applied.append(rules.tf32_off)
    else:
        rules.ignored.append(value)
