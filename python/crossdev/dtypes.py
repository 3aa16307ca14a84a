"""The dtype names crossdev reads and writes, from dtypes.json: the one table that the C++ engine's is
generated from too (cmake/CrossdevDtypes.cmake -> impl/util/dtype_names.cpp). Torch-free."""
import json
from pathlib import Path

_TABLE = json.loads((Path(__file__).resolve().parent / "dtypes.json").read_text(encoding="utf-8"))

NAMES = tuple(d["name"] for d in _TABLE["dtypes"])  # torch's Python names, in the table's order
FLOATING_NAMES = tuple(d["name"] for d in _TABLE["dtypes"] if d["floating"])  # the op and models matrices' dtypes
