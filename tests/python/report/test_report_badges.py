"""Issue 11 item 9: every badge is visible. Badges are white text (`.badge { color: #fff }`), so each
one needs a class of report.css that gives it a background dark enough to read the text on.

The "not run" badge used class "badge sk" while the CSS defines only `.st-sk`: white on white.
This checks the CSS/class contract on a rendered page that has every status and execution.
"""
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import crossdev.report.views
from crossdev.report import sample
from crossdev.report.render import main as render_main
from crossdev.report.views.h import execution_badge, status_badge
from crossdev.report.schema import EXECUTIONS, STATUSES

CSS = Path(crossdev.report.views.__file__).resolve().parent / "assets" / "report.css"
MIN_CONTRAST = 4.5  # WCAG AA for normal text


def css_rules(css):
    """{selector: {property: value}} for the flat rules of report.css (no nesting besides @media)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"@media[^{]*\{((?:[^{}]*\{[^{}]*\})*)\s*\}", "", css)
    rules = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        decls = dict((k.strip(), v.strip()) for k, v in (d.split(":", 1) for d in body.split(";") if ":" in d))
        for selector in selectors.split(","):
            rules.setdefault(selector.strip(), {}).update(decls)
    return rules


RULES = css_rules(CSS.read_text(encoding="utf-8"))
VARIABLES = RULES.get(":root", {})


def resolve(value):
    found = re.fullmatch(r"var\((--[\w-]+)\)", value.strip())
    return VARIABLES[found.group(1)] if found else value.strip()


def background_of(classes):
    """The background a bare `.class` rule gives an element with these classes (later rules win)."""
    color = None
    for selector, decls in RULES.items():
        if re.fullmatch(r"\.[\w-]+", selector) and selector[1:] in classes:
            for prop in ("background", "background-color"):
                if prop in decls:
                    color = resolve(decls[prop])
    return color


def luminance(hex_color):
    h = hex_color.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b):
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


class Badges(HTMLParser):
    def __init__(self):
        super().__init__()
        self.badges = []  # (classes, text)
        self._open = None

    def handle_starttag(self, tag, attrs):
        classes = dict(attrs).get("class", "") or ""
        if tag == "span" and "badge" in classes.split():
            self._open = [set(classes.split()), ""]

    def handle_data(self, data):
        if self._open is not None:
            self._open[1] += data

    def handle_endtag(self, tag):
        if tag == "span" and self._open is not None:
            self.badges.append(tuple(self._open))
            self._open = None


def badges_in(html):
    parser = Badges()
    parser.feed(html)
    return parser.badges


def assert_visible(classes, text):
    text_color = resolve(RULES[".badge"]["color"])
    background = background_of(classes)
    assert background is not None, f"badge {text!r} with classes {sorted(classes)}: no CSS rule gives it a background"
    assert contrast(text_color, background) >= MIN_CONTRAST, (text, background)


def test_badge_text_is_white_so_backgrounds_matter():
    assert resolve(RULES[".badge"]["color"]).lower() in ("#fff", "#ffffff")


def test_the_checker_finds_an_invisible_badge():
    with pytest.raises(AssertionError, match="no CSS rule gives it a background"):
        assert_visible({"badge", "sk"}, "not run")


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_every_execution_badge_is_visible(execution):
    (classes, text), = badges_in(execution_badge(execution))
    assert_visible(classes, text)


@pytest.mark.parametrize("status", STATUSES)
def test_every_status_badge_is_visible(status):
    (classes, text), = badges_in(status_badge(status))
    assert_visible(classes, text)


def test_every_badge_on_a_full_page_is_visible(tmp_path):
    cases = [sample.case(f"ctx.{s}.{e}", "context", status=s, execution=e, message=s)
             for s in STATUSES for e in EXECUTIONS]
    cases += [sample.ops_case("rms_norm", "cpu", "float32", "fused"),
              sample.ops_case("rms_norm", "cuda", "float32", "fused", status="skip", execution="not_run")]
    docs = dict(sample.demo_bundles())
    docs["all.json"] = sample.bundle("cpu", cases, host="all")
    paths = []
    for name, doc in docs.items():
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(doc))
    assert render_main([*map(str, paths), "--out", str(tmp_path / "out")]) == 0
    badges = badges_in((tmp_path / "out" / "index.html").read_text(encoding="utf-8"))
    assert any(text == "not run" for _, text in badges)
    for classes, text in badges:
        assert_visible(classes, text)
