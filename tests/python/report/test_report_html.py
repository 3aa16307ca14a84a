"""The HTML report is valid HTML5 (html5lib, strict) and self-contained: no request can leave the page."""
import html
import json
import re
from html.parser import HTMLParser

import pytest

from crossdev.report import sample
from crossdev.report.render import main as render_main

html5lib = pytest.importorskip("html5lib", reason="html5lib (pyproject.toml's test extra) is needed for the validity check")

XSS = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


@pytest.fixture(scope="module")
def report_html(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    paths = []
    bundles = sample.demo_bundles()
    bundles["xss.json"] = sample.bundle("cpu", [sample.case(XSS, "manager", status="crash", message=XSS)], host=XSS)
    for name, doc in bundles.items():
        paths.append(tmp / name)
        paths[-1].write_text(json.dumps(doc))
    truncated = tmp / "truncated.json"
    truncated.write_text(json.dumps(bundles["cuda.json"])[:300])
    assert render_main([*map(str, paths), str(truncated), "--out", str(tmp / "out"), "--history", str(paths[0])]) == 2
    return (tmp / "out" / "index.html").read_text(encoding="utf-8")


def test_strict_html5_parse(report_html):
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(report_html)  # raises ParseError with the position on the first spec violation
    assert not parser.errors


def test_strict_parser_rejects_broken_markup():  # the check above can fail
    with pytest.raises(html5lib.html5parser.ParseError):
        html5lib.HTMLParser(strict=True).parse("<!DOCTYPE html><title>x</title><p><b>unclosed</p></i>")


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.urls, self.handlers = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "action", "srcset", "poster", "data", "xlink:href") and value:
                self.urls.append(value)
            if name.startswith("on"):
                self.handlers.append((tag, name))


def test_no_external_resources_and_no_injected_markup(report_html):
    c = _Collector()
    c.feed(report_html)
    assert all(u.startswith("#") for u in c.urls), c.urls  # in-page anchors only
    assert not {"link", "img", "iframe", "object", "embed", "base", "form"} & set(c.tags)
    assert c.tags.count("script") == 1 and c.tags.count("style") == 1
    assert c.handlers == []  # the onerror= of the XSS payload stayed text
    assert not re.search(r"(https?:|wss?:|ftp:)?//[a-z0-9.-]+\.[a-z]{2,}", report_html.split("<style>")[0]
                         + report_html.split("</style>")[1], re.I)
    assert "@import" not in report_html and "url(" not in report_html


def test_content_security_policy_forbids_fetches_and_pins_the_script(report_html):
    found = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', report_html)
    csp = html.unescape(found.group(1))
    assert "default-src 'none'" in csp
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)", csp)  # no 'unsafe-inline' for scripts
