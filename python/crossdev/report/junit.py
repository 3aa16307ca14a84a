"""Merged JUnit XML: one <testsuite> per (runner, suite), plus one for unusable input bundles.

The status mapping matches the C++ writer (bundle_writer.cpp): fail/xpass -> <failure>,
error/crash -> <error>, skip/xfail -> <skipped>. The execution (real/simulated/not_run) is part
of the classname so no CI view can show a simulated pass as a real one.
"""
import math
import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from crossdev.case_statuses import JUNIT_ELEMENT
from crossdev.report.merge import Report

# XML 1.0 cannot carry these even escaped; ElementTree would write them and break the file.
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

_ELEMENT_FOR_STATUS = JUNIT_ELEMENT  # case_statuses.json's `junit`, as the C++ writer reads it


def _clean(text) -> str:
    return _ILLEGAL_XML.sub("?", str(text))


def _seconds(case: dict):
    """duration_s as a finite, non-negative float; None when unknown (absent, or null: non-finite)."""
    value = case.get("duration_s")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value + 0.0 if math.isfinite(value) and value >= 0 else None  # + 0.0: -0.0 would print as "-0.000"


def _time(seconds: float) -> str:
    """The common JUnit schema (junit-10.xsd, SUREFIRE_TIME) allows digits and at most 3 decimals."""
    return f"{seconds:.3f}"


def _case_element(parent: ET.Element, runner_label: str, case: dict) -> None:
    suite = case["suite"]
    seconds = _seconds(case)
    attrs = {"classname": _clean(f"crossdev.{runner_label}.{suite}.{case['execution']}"), "name": _clean(case["id"])}
    if seconds is not None:  # time is optional; an unknown duration is left out rather than written as 0
        attrs["time"] = _time(seconds)
    tc = ET.SubElement(parent, "testcase", attrs)
    element = _ELEMENT_FOR_STATUS[case["status"]]
    if element is None:
        return
    message = _clean(f"{case['status']}: {case.get('message', '')}")
    child = ET.SubElement(tc, element, message=message)
    if element != "skipped":
        where = f"{case.get('file', '')}:{case.get('line', 0)}"
        child.text = _clean(f"{where}\n{case.get('message', '')}")


def _suite_element(root: ET.Element, name: str, cases: list, runner=None) -> ET.Element:
    statuses = [c["status"] for c in cases]
    suite = ET.SubElement(
        root,
        "testsuite",
        name=_clean(name),
        tests=str(len(cases)),
        failures=str(sum(JUNIT_ELEMENT[s] == "failure" for s in statuses)),
        errors=str(sum(JUNIT_ELEMENT[s] == "error" for s in statuses)),
        skipped=str(sum(JUNIT_ELEMENT[s] == "skipped" for s in statuses)),
    )
    total = sum(_seconds(c) or 0.0 for c in cases)
    if math.isfinite(total):  # optional in the schema; a sum that overflows is left out
        suite.set("time", _time(total))
    if runner is not None:
        props = ET.SubElement(suite, "properties")
        target = runner.target
        for key in ("device_kind", "device_model", "host", "git_commit", "simulate_spec"):
            ET.SubElement(props, "property", name=key, value=_clean(target.get(key, "")))
        ET.SubElement(props, "property", name="simulated", value="true" if runner.simulated else "false")
        ET.SubElement(props, "property", name="bundle", value=_clean(runner.path))
    return suite


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", name="crossdev")
    for runner in report.runners:
        by_suite = defaultdict(list)
        for case in runner.cases:
            by_suite[case["suite"]].append(case)
        for suite_name in sorted(by_suite):
            suite = _suite_element(root, f"crossdev.{runner.label}.{suite_name}", by_suite[suite_name], runner)
            for case in by_suite[suite_name]:
                _case_element(suite, runner.label, case)
    if report.errors:
        # A CI system must see a broken runner bundle as an error, not as a runner with no tests.
        suite = ET.SubElement(root, "testsuite", name="crossdev.inputs", tests=str(len(report.errors)),
                              failures="0", errors=str(len(report.errors)), skipped="0", time="0.000")
        for err in report.errors:
            tc = ET.SubElement(suite, "testcase", classname="crossdev.inputs", name=_clean(err.path), time="0.000")
            first_line = err.message.splitlines()[0] if err.message else err.path
            ET.SubElement(tc, "error", message=_clean(first_line)).text = _clean(err.message)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
