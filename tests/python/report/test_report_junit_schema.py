"""Issue 11 item 11: every JUnit file crossdev writes validates against the common JUnit schema.

The schema is `data/junit-10.xsd` (Jenkins xUnit plugin's, the one pytest validates its own
output against; MIT, license in the file). Python has no XSD validator in the stdlib, so
`XsdSubset` below reads that file and validates against exactly the constructs it uses: global
and local element declarations, named and anonymous complex types (mixed or element-only,
sequence/choice with minOccurs/maxOccurs), attributes (declared, required, typed) and string
simple types restricted by a pattern. Anything else in a schema is refused, so the checker can
never silently ignore a constraint. It is checked against pytest's own --junitxml output (which
must pass) and against hand-made violations (which must not).

On top of the schema, crossdev's own conventions: counts are non-negative integers that agree
with the testcases, and every time is a non-negative xs:decimal.
"""
import itertools
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from crossdev.report import sample
from crossdev.report.render import main as render_main

XSD = Path(__file__).resolve().parents[1] / "data" / "junit-10.xsd"
XS = "{http://www.w3.org/2001/XMLSchema}"

# XSD patterns are anchored; Python's re backtracks exponentially on this one when a long value does
# not match (a 31-character string takes seconds). The equivalent below is linear;
# test_time_pattern_equivalent_is_exact proves the two agree on every short string.
SUREFIRE_TIME = r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?"
LINEAR_EQUIVALENT = {SUREFIRE_TIME: r"(?:[0-9,]*,[0-9]{3,}|[0-9]*)(?:\.[0-9]{0,3})?"}
DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")  # xs:decimal, non-negative
COUNT = re.compile(r"[0-9]+")


class SchemaError(AssertionError):
    pass


class _Decl:
    def __init__(self, name, simple=False, mixed=False, content=None, children=None, attributes=None):
        self.name, self.simple, self.mixed = name, simple, mixed
        self.content = content            # compiled regex over "<child>" tokens
        self.children = children or {}    # child name -> _Decl (or a str: the name of a global element)
        self.attributes = attributes or {}  # name -> (type name, required)


class XsdSubset:
    """A validator for the XSD constructs junit-10.xsd uses; anything else raises NotImplementedError."""

    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.patterns, self.complex_types, self.elements = {}, {}, {}
        for node in root:
            if node.tag == XS + "simpleType":
                self.patterns[node.get("name")] = self._simple_type(node)
        for node in root:
            if node.tag == XS + "complexType":
                self.complex_types[node.get("name")] = node
        for node in root:
            if node.tag == XS + "element":
                self.elements[node.get("name")] = self._element(node)
            elif node.tag not in (XS + "simpleType", XS + "complexType") and isinstance(node.tag, str):
                raise NotImplementedError(f"top-level {node.tag}")

    @staticmethod
    def _simple_type(node):
        restriction = node.find(XS + "restriction")
        if restriction is None or restriction.get("base") != "xs:string" or len(node) != 1:
            raise NotImplementedError("simpleType other than a pattern restriction of xs:string")
        patterns = []
        for facet in restriction:
            if facet.tag != XS + "pattern":
                raise NotImplementedError(f"facet {facet.tag}")
            value = facet.get("value")
            patterns.append(re.compile(LINEAR_EQUIVALENT.get(value, value)))
        return patterns

    def _element(self, node):
        name, type_name = node.get("name"), node.get("type")
        inline = [c for c in node if c.tag != XS + "annotation"]
        if type_name == "xs:string" and not inline:
            return _Decl(name, simple=True)
        if type_name in self.complex_types and not inline:
            return self._complex(name, self.complex_types[type_name])
        if type_name is None and len(inline) == 1 and inline[0].tag == XS + "complexType":
            return self._complex(name, inline[0])
        raise NotImplementedError(f"element {name} of type {type_name}")

    def _complex(self, name, node):
        decl = _Decl(name, mixed=node.get("mixed") == "true")
        particles = []
        for child in node:
            if child.tag == XS + "attribute":
                if child.get("type") not in ("xs:string", *self.patterns) or child.get("use") not in (None, "optional",
                                                                                                        "required"):
                    raise NotImplementedError(f"attribute {child.attrib}")
                decl.attributes[child.get("name")] = (child.get("type"), child.get("use") == "required")
            elif child.tag in (XS + "sequence", XS + "choice"):
                particles.append(self._particle(child, decl))
            else:
                raise NotImplementedError(f"{child.tag} in complexType {name}")
        if len(particles) > 1:
            raise NotImplementedError(f"several content models in {name}")
        decl.content = re.compile(particles[0] if particles else "")
        return decl

    def _particle(self, node, decl):
        if node.tag == XS + "element":
            ref = node.get("ref")
            child_name = ref or node.get("name")
            decl.children[child_name] = ref if ref else self._element(node)
            body = re.escape(f"<{child_name}>")
        elif node.tag in (XS + "sequence", XS + "choice"):
            parts = [self._particle(c, decl) for c in node if isinstance(c.tag, str)]
            body = ("|" if node.tag == XS + "choice" else "").join(f"(?:{p})" for p in parts)
        else:
            raise NotImplementedError(f"particle {node.tag}")
        low = int(node.get("minOccurs", "1"))
        high = node.get("maxOccurs", "1")
        return f"(?:{body}){{{low},{'' if high == 'unbounded' else int(high)}}}"

    # -- validation --------------------------------------------------------------------------------

    def validate(self, xml_text):
        root = ET.fromstring(xml_text.encode("utf-8") if isinstance(xml_text, str) else xml_text)
        if root.tag not in self.elements:
            raise SchemaError(f"root <{root.tag}> is not a global element of the schema")
        self._check(root, self.elements[root.tag], f"/{root.tag}")
        return root

    def _check(self, node, decl, where):
        if decl.simple:
            if node.attrib or len(node):
                raise SchemaError(f"{where}: <{node.tag}> is xs:string: no attributes or children allowed")
            return
        for name, value in node.attrib.items():
            if name not in decl.attributes:
                raise SchemaError(f"{where}: attribute {name!r} is not declared for <{node.tag}>")
            type_name, _ = decl.attributes[name]
            if type_name != "xs:string" and not any(p.fullmatch(value) for p in self.patterns[type_name]):
                raise SchemaError(f"{where}/@{name}: {value!r} is not a valid {type_name}")
        for name, (_, required) in decl.attributes.items():
            if required and name not in node.attrib:
                raise SchemaError(f"{where}: <{node.tag}> is missing required attribute {name!r}")
        tokens = "".join(f"<{c.tag}>" for c in node)
        if not decl.content.fullmatch(tokens):
            raise SchemaError(f"{where}: children {[c.tag for c in node]} do not fit <{node.tag}>'s content model")
        if not decl.mixed:
            texts = [node.text] + [c.tail for c in node]
            if any(t and t.strip() for t in texts):
                raise SchemaError(f"{where}: <{node.tag}> has element-only content but holds text")
        for i, child in enumerate(node):
            child_decl = decl.children[child.tag]
            if isinstance(child_decl, str):
                child_decl = self.elements[child_decl]
            self._check(child, child_decl, f"{where}/{child.tag}[{i}]")


def crossdev_conventions(root):
    """Counts are integers that agree with the testcases; times are non-negative decimals."""
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for suite in suites:
        name = suite.get("name")
        for attr in ("tests", "failures", "errors", "skipped"):
            value = suite.get(attr)
            if value is not None and not COUNT.fullmatch(value):
                raise SchemaError(f"testsuite {name!r}: {attr}={value!r} is not a non-negative integer")
        cases = suite.findall("testcase")
        expected = {"tests": len(cases), "failures": sum(c.find("failure") is not None for c in cases),
                    "errors": sum(c.find("error") is not None for c in cases),
                    "skipped": sum(c.find("skipped") is not None for c in cases)}
        for attr, count in expected.items():
            if suite.get(attr) is not None and int(suite.get(attr)) != count:
                raise SchemaError(f"testsuite {name!r}: {attr}={suite.get(attr)} but {count} testcase(s) say so")
    for node in root.iter():
        time = node.get("time")
        if node.tag in ("testsuite", "testcase", "testsuites") and time is not None and not DECIMAL.fullmatch(time):
            raise SchemaError(f"<{node.tag} name={node.get('name')!r}> time={time!r} is not a non-negative decimal")


SCHEMA = XsdSubset(XSD)


def check_junit(text):
    crossdev_conventions(SCHEMA.validate(text))


# --- the checker itself ----------------------------------------------------------------------------

def test_time_pattern_equivalent_is_exact():
    original, linear = re.compile(SUREFIRE_TIME), re.compile(LINEAR_EQUIVALENT[SUREFIRE_TIME])
    for length in range(9):
        for chars in itertools.product("1,.", repeat=length):
            s = "".join(chars)
            assert bool(original.fullmatch(s)) == bool(linear.fullmatch(s)), s
    for s in ("0.123", "12.5", "1,234.000", "0.1234", "-1.000", "1e-05", "nan", "inf", "0.123456"):
        assert bool(original.fullmatch(s)) == bool(linear.fullmatch(s)), s


def test_the_vendored_schema_keeps_its_license():
    text = XSD.read_text(encoding="utf-8")
    assert "The MIT License (MIT)" in text and "Copyright (c) 2014, Gregory Boissinot" in text


def test_pytests_own_junit_output_passes_the_checker(tmp_path):
    """pytest validates its xunit2 output against this schema; the checker must agree with it."""
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('setup <&> broke')\n"
        "def test_pass(): pass\n"
        "def test_fail(): assert 1 == 2\n"
        "def test_error(broken): pass\n"
        "@pytest.mark.skip(reason='no')\ndef test_skip(): pass\n"
        "@pytest.mark.xfail\ndef test_xfail(): assert 0\n"
        "def test_output(): print('out')\n")
    junit = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit2",
                    f"--junitxml={junit}", str(tmp_path / "test_sample.py")], cwd=tmp_path, capture_output=True,
                   timeout=120)
    text = junit.read_text(encoding="utf-8")
    assert "<error" in text and "<failure" in text and "<skipped" in text
    SCHEMA.validate(text)


GOOD = ('<testsuites name="x"><testsuite name="s" tests="1" failures="0" errors="0" skipped="0" time="0.125">'
        '<properties><property name="k" value="v"/></properties>'
        '<testcase classname="c" name="t" time="0.000001"/></testsuite></testsuites>')


@pytest.mark.parametrize("bad, expected", [
    (GOOD.replace('time="0.125"', 'time="0.123456"'), "is not a valid SUREFIRE_TIME"),
    (GOOD.replace('time="0.125"', 'time="-1.000"'), "is not a valid SUREFIRE_TIME"),
    (GOOD.replace('time="0.125"', 'time="1e-05"'), "is not a valid SUREFIRE_TIME"),
    (GOOD.replace(' name="s"', ""), "missing required attribute 'name'"),
    (GOOD.replace(' tests="1"', ""), "missing required attribute 'tests'"),
    (GOOD.replace('classname="c" ', 'classname="c" status="ok" '), "attribute 'status' is not declared"),
    (GOOD.replace("<properties>", "<properties><bogus/>"), "do not fit <properties>"),
    (GOOD.replace('<testcase classname="c" name="t" time="0.000001"/>',
                  '<testcase name="t"><errors message="x"/></testcase>'), "do not fit <testcase>"),
    (GOOD.replace("<properties>", "text<properties>"), "element-only content but holds text"),
    (GOOD.replace('<property name="k" value="v"/>', '<property name="k"/>'), "missing required attribute 'value'"),
    ("<junit/>", "not a global element"),
])
def test_the_checker_rejects_schema_violations(bad, expected):
    SCHEMA.validate(GOOD)
    with pytest.raises(SchemaError, match=re.escape(expected)):
        SCHEMA.validate(bad)


@pytest.mark.parametrize("bad, expected", [
    (GOOD.replace('tests="1"', 'tests="1.0"'), "tests='1.0' is not a non-negative integer"),
    (GOOD.replace('tests="1"', 'tests="2"'), "tests=2 but 1 testcase(s)"),
    (GOOD.replace('time="0.000001"', 'time="nan"'), "time='nan' is not a non-negative decimal"),
])
def test_the_checker_enforces_crossdev_conventions(bad, expected):
    with pytest.raises(SchemaError, match=re.escape(expected)):
        check_junit(bad)


# --- what crossdev writes ----------------------------------------------------------------------------

def render_junit_of(tmp_path, docs, texts=()):
    paths = []
    for i, doc in enumerate(docs):
        paths.append(tmp_path / f"b{i}.json")
        paths[-1].write_text(json.dumps(doc), encoding="utf-8")
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"t{i}.json")
        paths[-1].write_text(text, encoding="utf-8")
    render_main([*map(str, paths), "--out", str(tmp_path / "out")])
    return (tmp_path / "out" / "junit.xml").read_text(encoding="utf-8")


def test_render_junit_of_the_demo_bundles_validates(tmp_path):
    check_junit(render_junit_of(tmp_path, sample.demo_bundles().values()))


def test_render_junit_with_unusable_inputs_validates(tmp_path):
    text = render_junit_of(tmp_path, [sample.bundle("cpu", [sample.case("a", "context", status="crash")])],
                           texts=['{"schema": "crossdev.bundle", "cases": [', "\x00\x01 not json"])
    assert 'name="crossdev.inputs"' in text
    check_junit(text)


def test_render_junit_times_have_at_most_3_decimals(tmp_path):
    """The issue: 5 testsuite time attributes with 6 decimals failed the schema."""
    cases = [sample.case(f"c{i}", "context", status=s) for i, s in enumerate(("pass", "fail", "skip", "error"))]
    durations = [0.1234567, 1e-9, 12345.6789, None]
    for case, duration in zip(cases, durations):
        case["duration_s"] = duration
    text = render_junit_of(tmp_path, [sample.bundle("cpu", cases)])
    check_junit(text)
    times = {tc.get("name"): tc.get("time") for tc in ET.fromstring(text).iter("testcase")}
    assert times == {"c0": "0.123", "c1": "0.000", "c2": "12345.679", "c3": None}  # null = non-finite: no time
    suite = ET.fromstring(text).find("testsuite")
    assert suite.get("time") == "12345.802"


def test_render_junit_with_huge_and_infinite_durations_validates(tmp_path):
    doc = sample.bundle("cpu", [sample.case("a", "context"), sample.case("b", "context")])
    doc["cases"][1]["duration_s"] = 1e300
    text = json.dumps(doc).replace('"duration_s": 0.001', '"duration_s": 1e999')
    check_junit(render_junit_of(tmp_path, [], texts=[text]))


CLI = Path(os.environ.get("CROSSDEV_BUILD_DIR", Path(__file__).resolve().parents[3] / "build")) / "bin" / "crossdev"


@pytest.mark.skipif(not CLI.exists(), reason=f"{CLI} is not built")
def test_cli_junit_validates(tmp_path, repo_root):
    junit = tmp_path / "junit.xml"
    proc = subprocess.run([str(CLI), "run", "--matrix", str(repo_root / "matrices" / "redirect_table.yaml"),
                           "--out", str(tmp_path / "b.json"), "--junit", str(junit), "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_junit(junit.read_text(encoding="utf-8"))
