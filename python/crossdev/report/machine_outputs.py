"""The outputs one runner computed for a cross-machine case (docs/opinfo.md, "Cross-machine"), as a file
beside its bundle, and the comparison of two runners' files: stdlib only, so `crossdev report` compares
them without torch.

A file is one case: JSON {"schema": "crossdev.cross_machine_outputs", "schema_version": 1, "case",
"samples_sha256", "host", "machine", "torch", "cpu_capability", "byteorder", "tolerance": {"rtol", "atol",
"source"}, "compared" (why only metadata, or absent), "samples": [{"index", "shapes", "status": "ok" |
"raised", "message", "values": [{"dtype", "shape", "data": base64 of the contiguous bytes} | {"value":
repr of a non-tensor}]}]}. The writer is crossdev.opinfo.cross_machine (torch's side).

The figures are crossdev's (docs/parity.md): max abs, max rel, and the floored ULP error
|a - e| / ulp(max(|e|, atol / max(rtol, eps))) in the compared dtype; a sample is close when every element
satisfies assert_close's |a - e| <= atol + rtol * |e| (NaN equals NaN, equal infinities agree)."""
import base64
import hashlib
import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

SCHEMA = "crossdev.cross_machine_outputs"
VERSION = 1


class OutputsError(Exception):
    """An outputs file that cannot be used; the text names the file and what was expected."""


# dtype -> (struct code of one element, bytes, p (mantissa digits) or None for exact types, e_min);
# a complex dtype is compared as its real and imaginary parts (torch.view_as_real).
DTYPES: Dict[str, Tuple[str, int, Optional[int], int]] = {
    "float64": ("d", 8, 53, -1022), "float32": ("f", 4, 24, -126), "float16": ("e", 2, 11, -14),
    "bfloat16": ("H", 2, 8, -126), "complex128": ("d", 16, 53, -1022), "complex64": ("f", 8, 24, -126),
    "int64": ("q", 8, None, 0), "int32": ("i", 4, None, 0), "int16": ("h", 2, None, 0), "int8": ("b", 1, None, 0),
    "uint8": ("B", 1, None, 0), "bool": ("?", 1, None, 0),
}


def sha256_of(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load(path: Path, expected_sha256: str) -> dict:
    """The file's document, after checking its bytes against the digest its bundle recorded."""
    try:
        actual = sha256_of(path)
    except OSError as e:
        raise OutputsError(f"{path}: cannot read: {e.strerror} (expected the outputs file the bundle names, beside "
                           "it in the --export-samples folder)") from None
    if actual != expected_sha256:
        raise OutputsError(f"{path}: sha256 {actual[:16]}..., expected {expected_sha256[:16]}... as its bundle records "
                           "(the file was changed or truncated after the run)")
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise OutputsError(f"{path}: not valid JSON ({e}); expected a {SCHEMA}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or doc.get("schema_version") != VERSION:
        raise OutputsError(f"{path}: expected a {SCHEMA} of schema_version {VERSION}")
    return doc


def _values(entry) -> Tuple[str, List[float], bytes]:
    """(dtype, the elements as Python numbers, the raw bytes) of one encoded tensor."""
    dtype = entry["dtype"]
    if dtype not in DTYPES:
        raise OutputsError(f"a tensor of dtype {dtype}: expected one of {', '.join(DTYPES)}")
    raw = base64.b64decode(entry["data"])
    code, size, _, _ = DTYPES[dtype]
    count = len(raw) // struct.calcsize(code)
    values = list(struct.unpack(f"<{count}{code}", raw))
    if dtype == "bfloat16":  # the upper half of a float32
        values = list(struct.unpack(f"<{count}f", struct.pack(f"<{count}I", *(v << 16 for v in values))))
    return dtype, values, raw


def _ulp(x: float, p: int, e_min: int) -> float:
    if x >= 2.0 ** e_min:
        return 2.0 ** (math.frexp(x)[1] - 1 - (p - 1))
    return 2.0 ** (e_min - (p - 1))


@dataclass
class SampleComparison:
    bitwise_equal: bool = True
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    mismatch: Optional[str] = None  # the first value beyond the tolerance, or a difference in metadata


def _compare_values(label, a_vals, e_vals, dtype, rtol, atol, out: SampleComparison) -> None:
    _, _, p, e_min = DTYPES[dtype]
    exact = p is None
    floor = 0.0 if exact else atol / max(rtol, 2.0 ** -(p - 1))
    beyond, first = 0, None
    for i, (a, e) in enumerate(zip(a_vals, e_vals)):
        a, e = float(a), float(e)
        if a == e or (a != a and e != e):
            continue
        if not (math.isfinite(a) and math.isfinite(e)):
            diff = rel = ulp = math.inf
            close = False
        else:
            diff = abs(a - e)
            rel = diff / abs(e) if e else math.inf
            ulp = 0.0 if exact else diff / _ulp(max(abs(e), floor), p, e_min)
            close = diff <= (0.0 if exact else atol + rtol * abs(e))
        out.max_abs, out.max_rel, out.max_ulp = max(out.max_abs, diff), max(out.max_rel, rel), max(out.max_ulp, ulp)
        if not close:
            beyond += 1
            first = first or f"flat index {i}: {e!r} vs {a!r}"
    if beyond and out.mismatch is None:
        out.mismatch = (f"{label}: {beyond} of {len(e_vals)} element(s) beyond rtol={rtol:g}, atol={atol:g}; "
                        f"first at {first}")


def compare_sample(expected: dict, actual: dict, rtol: float, atol: float, values: bool = True) -> SampleComparison:
    """Two runners' records of one sample (both "ok"): `expected` is the reference side of the pair."""
    out = SampleComparison()
    e_list, a_list = expected.get("values", []), actual.get("values", [])
    if len(e_list) != len(a_list):
        out.bitwise_equal = False
        out.mismatch = f"{len(e_list)} values on one runner, {len(a_list)} on the other"
        return out
    for i, (e, a) in enumerate(zip(e_list, a_list)):
        label = f"output[{i}]"
        if "value" in e or "value" in a:
            if e.get("value") != a.get("value"):
                out.bitwise_equal = False
                out.mismatch = out.mismatch or f"{label}: {e.get('value', 'a tensor')} vs {a.get('value', 'a tensor')}"
            continue
        if e["dtype"] != a["dtype"] or e["shape"] != a["shape"]:
            out.bitwise_equal = False
            out.mismatch = out.mismatch or (f"{label}: metadata differs: {e['dtype']} {e['shape']} vs "
                                            f"{a['dtype']} {a['shape']}")
            continue
        if e["data"] == a["data"]:
            continue
        out.bitwise_equal = False
        if values:
            dtype, e_vals, _ = _values(e)
            _, a_vals, _ = _values(a)
            _compare_values(label, a_vals, e_vals, dtype, rtol, atol, out)
    return out
