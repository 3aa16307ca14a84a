"""The `skip` entries of matrices/expectations/opinfo/<kind>.yaml, applied in the worker before a case
runs (a case expected to crash the process or hang is not started). The engine loads the files, keeps
the entries that apply on this host (real or simulated) and hands them over in file order as
request["expectations"] = {kind: [{match, status, reason, where}]}; `xfail` entries the engine applies
to the case's result itself (conformance/suites/expectation_files.h, apply_xfail). The first matching entry wins."""
from __future__ import annotations

import fnmatch


def glob_match(pattern: str, text: str) -> bool:
    """crossdev's one glob dialect (parity::glob_match, conformance/parity/expectations.h): '*' any run of
    characters, '/' included, '?' exactly one, '[seq]' / '[!seq]' a class; a backslash is literal."""
    return fnmatch.fnmatchcase(text, pattern)


def expected_skip(request: dict, kind: str, case_id: str) -> str | None:
    """The message of a case skipped by its expectation, or None when it runs."""
    for entry in request.get("expectations", {}).get(kind, []):
        if glob_match(entry["match"], case_id):
            if entry["status"] != "skip":
                return None
            return f"expected skip ({entry['reason']}, {entry['where']})"
    return None
