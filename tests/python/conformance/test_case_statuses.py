"""The case statuses are one table, crossdev/case_statuses.json (docs/ARCHITECTURE.md, "A status"): Python's
report, JUnit and worker take theirs from it, as the engine's enums are generated from it
(tests/gtest/runner/test_case_statuses.cpp checks the C++ half). A worker's record carries a status by name."""
import json
from pathlib import Path

import pytest

import crossdev
from crossdev import case_statuses
from crossdev.report import schema
from crossdev.report.junit import _ELEMENT_FOR_STATUS
from crossdev.report.views.h import STATUS_CLASS
from crossdev.worker import encode_case

TABLE = json.loads((Path(crossdev.__file__).parent / "case_statuses.json").read_text())


def test_the_report_schema_and_junit_read_the_table():
    assert schema.STATUSES == tuple(s["name"] for s in TABLE["statuses"])
    assert set(schema.GATING_STATUSES) == {s["name"] for s in TABLE["statuses"] if s["gates"]}
    assert schema.EXECUTIONS == tuple(e["name"] for e in TABLE["executions"])
    assert _ELEMENT_FOR_STATUS == {s["name"]: s["junit"] or None for s in TABLE["statuses"]}
    assert {s for s, c in STATUS_CLASS.items() if c == "bad"} == set(schema.GATING_STATUSES)
    assert set(STATUS_CLASS) == set(schema.STATUSES)


@pytest.mark.parametrize("status", case_statuses.STATUSES)
def test_a_workers_record_carries_the_status_by_name(status):
    record = json.loads(encode_case({"id": "r/c", "status": status, "execution": "not_run"}))
    assert record["event"] == "case" and record["status"] == status and record["execution"] == "not_run"


def test_a_status_outside_the_table_is_the_workers_own_error():
    with pytest.raises(ValueError, match="not one of case_statuses.json"):
        encode_case({"id": "r/c", "status": "passed"})
