"""Headless Chromium loads the report: no console errors, no network request, scoreboard present.

Console messages come from Chromium's stderr log (--enable-logging=stderr: "CONSOLE" lines);
network requests from its NetLog (--log-net-log), keeping only requests made for a file://
page, since the browser's own background traffic also lands there. A negative control page
proves both detectors fire. The screenshot is saved to $CROSSDEV_ARTIFACT_DIR (or the test's
temp dir) as report.png.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from crossdev.report import sample
from crossdev.report.render import main as render_main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package `chromium`; "
                                                          "ci/setup.sh installs it)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--enable-logging=stderr", "--v=0"]


def load(page: Path, tmp: Path, *extra):
    """Runs Chromium on `page`; returns (stdout, console lines, URLs the page requested)."""
    net_log = tmp / f"{page.stem}.netlog.json"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--log-net-log={net_log}", f"--user-data-dir={tmp / 'profile'}",
                           *extra, page.resolve().as_uri()], capture_output=True, text=True, timeout=60)
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
