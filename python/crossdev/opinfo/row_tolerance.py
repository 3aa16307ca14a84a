"""A row's own tolerance (docs/opinfo.md): `tolerance: {rtol, atol}` for every dtype of the row, or
`{<dtype>: {rtol, atol}}` per dtype, replaces crossdev's per-dtype table and op_db's
toleranceOverride (tolerances.tolerance_for) for the row's cases, in either direction. The engine
checks the numbers and sends the per-dtype form with the row's file:line ("tolerance_where"); the
worker's `check` names dtypes that are unknown or not the row's (problems)."""
from __future__ import annotations

from .tolerances import Tolerance


def problems(row, dtype_names) -> list:
    """Why the row's `tolerance` is bad input (its dtype names), one message per problem."""
    out = []
    row_dtypes = row.get("dtypes", [])
    for name in row.get("tolerance", {}):
        if name not in dtype_names:
            out.append(f"unknown dtype '{name}'; expected one of {', '.join(dtype_names)}")
        elif name not in row_dtypes:
            out.append(f"dtype '{name}' is not one of the row's dtypes ({', '.join(row_dtypes)})")
    return out


def apply(tol: Tolerance, row, dtype_name: str) -> Tolerance:
    """The row's tolerance for `dtype_name` where it gives one, else `tol`; the source names the row."""
    given = row.get("tolerance", {}).get(dtype_name)
    if given is None:
        return tol
    return Tolerance(given["rtol"], given["atol"], f"row {row['tolerance_where']} (replaces {tol.source})")
