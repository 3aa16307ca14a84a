"""Headless Chromium loads the report: no console errors, no network request, scoreboard present.

Console messages come from Chromium's stderr log (--enable-logging=stderr: "CONSOLE" lines);
network requests from its NetLog (--log-net-log), keeping only requests made for a file://
page, since the browser's own background traffic also lands there. A negative control page
proves both detectors fire. The screenshot is saved to $CROSSDEV_ARTIFACT_DIR (or the test's
temp dir) as report.png.

A second report has make report's benchmark shape (every op of the sweep, bench.yaml's op rows, at every
size of matrices/bench/sweep.yaml and at the peer sizes, fwd and fwd_bwd) against a baseline copy of its
bundle in which one op is slowed well beyond the noise and another within it, its large sections stored
compressed: in the DOM Chromium builds, every chart lists its sizes in numeric order, every op has its
charts, the baseline view flags the slowed op alone, and the compressed sections open on demand.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from crossdev.report import sample
from crossdev.report.render import main as render_main
from crossdev.report.views import page

sys.path.insert(0, str(ROOT / "bench" / "python"))
import sweep  # noqa: E402  (bench/python: the sweep's sizes, one source of truth)
from bench_sizes import parse_size  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package `chromium`; "
                                                          "ci/setup.sh installs it)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--enable-logging=stderr", "--v=0"]


def load(page: Path, tmp: Path, *extra, fragment: str = ""):
    """Runs Chromium on `page` (at #fragment); returns (stdout, console lines, URLs the page requested)."""
    net_log = tmp / f"{page.stem}.netlog.json"
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--log-net-log={net_log}", f"--user-data-dir={tmp / 'profile'}",
                           *extra, url], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    log = json.loads(net_log.read_text())
    requests = [e["params"]["url"] for e in log["events"]
                if e.get("params", {}).get("network_isolation_key", "").startswith("file://")
                and "url" in e.get("params", {})]
    return proc.stdout, console, requests


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chromium")
    paths = []
    for name, doc in sample.demo_bundles().items():
        paths.append(tmp / name)
        paths[-1].write_text(json.dumps(doc))
    assert render_main([*map(str, paths), "--out", str(tmp / "out")]) == 0
    return tmp / "out" / "index.html"


def test_report_loads_without_console_errors_or_requests(report_page, tmp_path):
    dom, console, requests = load(report_page, tmp_path, "--dump-dom")
    assert console == []
    assert requests == []
    assert 'data-js="ready"' in dom  # the inline script ran (the CSP hash matched)
    assert 'id="scoreboard-table"' in dom and "cpu@linux-cpu+sim/mps" in dom


def test_detectors_catch_a_console_error_and_a_request(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><title>x</title><img src="http://127.0.0.1:9/x.png" alt="">'
                   '<script>undefinedFunction();</script>')
    _, console, requests = load(bad, tmp_path, "--dump-dom")
    assert any("undefinedFunction" in line for line in console)
    assert requests == ["http://127.0.0.1:9/x.png"]


def test_screenshot(report_page, tmp_path):
    folder = Path(os.environ.get("CROSSDEV_ARTIFACT_DIR", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "report.png"
    load(report_page, tmp_path, f"--screenshot={shot}", "--window-size=1400,2000", "--hide-scrollbars")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a rendered page, not a blank image


# --- make report's benchmark shape, against a baseline ---------------------------------------------------------

SLOWED, WITHIN_NOISE = "swiglu", "rotary"   # x1.5: far beyond a 2% jitter; x1.02: inside it
SETTLE = "--virtual-time-budget=10000"       # lets the page's promises (DecompressionStream) finish before the dump


def sweep_ops():
    """The ops the sweep times: bench.yaml's op rows (every op with a bench layout), default profile."""
    cases = yaml.safe_load((ROOT / "matrices" / "bench" / "bench.yaml").read_text())["cases"]
    return sorted({c["op"] for c in cases if c.get("kind") == "op" and c.get("profile", "default") == "default"})


def size_sorted(labels):
    return labels == sorted(labels, key=lambda s: parse_size(s, "chart")[0])


@pytest.fixture(scope="module")
def sweep_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    ops, sizes = sweep_ops(), list(sweep.load()[0].sizes)
    peers = [parse_size(s, "peer") for s in ("1M", "8M")]
    assert SLOWED in ops and WITHIN_NOISE in ops
    cases = [sample.case(f"ops.{op}.case{i}", "ops") for op in ops for i in range(3)]

    def write(name, slow=None):
        bench = sample.sweep_bench(ops, sizes, peers, jitter=0.02, slow=slow)
        (tmp / name).write_text(json.dumps(sample.bundle("cpu", cases, benchmarks=bench)))
        return str(tmp / name)

    base, new = write("base.json"), write("new.json", {SLOWED: 1.5, WITHIN_NOISE: 1.02})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(page, "LAZY_MIN_BYTES", 0)  # this small bundle's sections are stored compressed too
        assert render_main([new, "--baseline", base, "--out", str(tmp / "out")]) == 0
    return tmp / "out" / "index.html", ops, [c["id"] for c in cases]


def figures(dom):
    """{(op, pass): [[x labels] per svg]} of the scaling charts in the DOM."""
    out = {}
    for m in re.finditer(r'<figure class="scaling"[^>]*data-op="([^"]*)" data-pass="([^"]*)"[^>]*>(.*?)</figure>', dom,
                         re.S):
        out[(m.group(1), m.group(2))] = [re.findall(r'class="x-label"[^>]*>([^<]*)<', svg)
                                         for svg in re.findall(r"<svg.*?</svg>", m.group(3), re.S)]
    return out


def test_sweep_report_loads_clean(sweep_page, tmp_path):
    dom, console, requests = load(sweep_page[0], tmp_path, "--dump-dom", SETTLE)
    assert console == [] and requests == []
    assert 'data-js="ready"' in dom


def test_every_sweep_op_has_its_charts_with_sizes_in_numeric_order(sweep_page, tmp_path):
    path, ops, _ = sweep_page
    dom, _, _ = load(path, tmp_path, "--dump-dom", SETTLE)
    charts = figures(dom)
    assert {op for op, _ in charts} == set(ops)
    for op in ops:
        assert (op, "fwd") in charts and (op, "fwd_bwd") in charts, op
    for where, svgs in charts.items():
        assert len(svgs) == 2, where  # the scaling chart and the fused / best peer ratio beside it
        for labels in svgs:
            assert labels and size_sorted(labels), (where, labels)
    assert len(charts[(ops[0], "fwd")][0]) == len(sweep.load()[0].sizes)


def test_baseline_view_flags_the_slowed_op_and_not_the_one_within_noise(sweep_page, tmp_path):
    dom, _, _ = load(sweep_page[0], tmp_path, "--dump-dom", SETTLE)
    rows = re.findall(r'<tr class="verdict-[^"]*" data-verdict="([^"]*)" data-name="([^"]*)"', dom)
    flagged = {name.split("/")[0] for verdict, name in rows if verdict == "regression"}
    assert flagged == {SLOWED}
    assert rows[0][0] == "regression"  # regressions first
    assert not any(v != "unchanged" for v, n in rows if n.startswith(WITHIN_NOISE + "/"))
    marked = {op for (op, _), _ in figures(dom).items()
              if re.search(rf'data-op="{op}"[^>]*>(?:(?!</figure>).)*class="baseline-mark"', dom, re.S)}
    assert marked == {SLOWED}  # drawn on its op's chart
    assert "regression(s) vs baseline" in dom.split('id="bench-verdict"')[1][:80]


def test_compressed_sections_open_on_demand(sweep_page, tmp_path):
    path, _, ids = sweep_page
    closed, _, _ = load(path, tmp_path, "--dump-dom", SETTLE)
    assert re.search(r'<section id="suites">.*?<div class="lazy" data-gz="', closed, re.S)
    assert not any(f"<code>{i}</code>" in closed for i in ids)  # stored compressed, not in the DOM
    opened, console, _ = load(path, tmp_path, "--dump-dom", SETTLE, fragment="suites")
    assert console == []
    assert 'data-lazy-pending="0"' in opened
    assert all(f"<code>{i}</code>" in opened for i in ids)  # every case reachable
