"""Scaling charts and the baseline comparison (issue 52): size labels parsed and ordered as numbers (never as
text), one chart per op and pass with its sizes in numeric order, and `crossdev report --baseline` showing
bench-gate's own verdict: a slowed op flagged, a change within the noise not, bad input exit 2."""
import json
import re
import sys

import pytest

from crossdev import bench_gate
from crossdev.report import sample
from crossdev.report.bench import size_order, size_value
from crossdev.report.render import main as render_main

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "python"))
import sweep  # noqa: E402  (bench/python: the sweep's sizes, one source of truth)
from bench_sizes import parse_size  # noqa: E402

SWEEP_SIZES = list(sweep.load()[0].sizes)               # [(1024, "1K"), ...] as matrices/bench/sweep.yaml lists them
PEER_SIZES = [parse_size(s, "test") for s in ("1M", "8M")]


def test_size_labels_are_numbers():
    assert size_value("1K") == 1024 and size_value("16K") == 16384 and size_value("8M") == 8 << 20
    assert size_value("16") == 16 and size_value("2x8x64") == 1024 and size_value("4096x1024") == 4096 * 1024
    assert size_value("1k") == 1024 and size_value("1.5K") == 1536
    assert size_value("cpu") is None and size_value("") is None and size_value("resolve.cuda.mps") is None
    for elements, label in SWEEP_SIZES:  # the bench side's own parser agrees
        assert size_value(label) == elements


def test_sizes_sort_numerically_not_as_text():
    labels = ["16K", "1K", "1M", "256K", "4K", "64K", "8M"]  # text order, as the old report showed them
    assert sorted(labels) == labels
    assert sorted(labels, key=size_order) == ["1K", "4K", "16K", "64K", "256K", "1M", "8M"]
    assert sorted(["other", "8M", "2x8x64", "16"], key=size_order) == ["16", "2x8x64", "8M", "other"]


def bundle_file(path, bench):
    doc = sample.bundle("cpu", [sample.case("a", "context")], benchmarks=bench)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def render(tmp_path, current, *extra):
    out = tmp_path / "out"
    code = render_main([str(current), "--out", str(out), *extra])
    return code, (out / "index.html").read_text(encoding="utf-8") if (out / "index.html").exists() else ""


def x_labels_per_chart(html):
    """[(op, pass, [x labels of each svg in document order])] for every scaling chart."""
    charts = []
    for m in re.finditer(r'<figure class="scaling"[^>]*data-op="([^"]*)" data-pass="([^"]*)"[^>]*>(.*?)</figure>', html,
                         re.S):
        svgs = re.findall(r"<svg.*?</svg>", m.group(3), re.S)
        charts.append((m.group(1), m.group(2), [re.findall(r'class="x-label"[^>]*>([^<]*)<', s) for s in svgs]))
    return charts


def test_every_chart_lists_its_sizes_in_numeric_order(tmp_path):
    bench = sample.sweep_bench(["rms_norm", "swiglu"], SWEEP_SIZES, PEER_SIZES)
    assert [e["name"] for e in bench["benchmarks"]].index("rms_norm/aten/float32/16K/cpu/fwd") < \
        [e["name"] for e in bench["benchmarks"]].index("rms_norm/aten/float32/1K/cpu/fwd")  # the input is text order
    code, html = render(tmp_path, bundle_file(tmp_path / "b.json", bench))
    assert code == 0
    charts = x_labels_per_chart(html)
    assert {(op, p) for op, p, _ in charts} == {(op, p) for op in ("rms_norm", "swiglu") for p in ("fwd", "fwd_bwd")}
    for op, pass_, svgs in charts:
        assert len(svgs) == 2  # the scaling chart and the fused / best peer ratio beside it
        for labels in svgs:
            assert labels == sorted(labels, key=lambda s: parse_size(s, "x")[0]), (op, pass_, labels)
        if pass_ == "fwd":
            assert svgs[0] == [label for _, label in SWEEP_SIZES]


def test_baseline_flags_a_slowed_op_and_not_one_within_the_noise(tmp_path):
    ops = ["rms_norm", "swiglu", "rotary"]
    base = bundle_file(tmp_path / "base.json", sample.sweep_bench(ops, SWEEP_SIZES, PEER_SIZES, jitter=0.02))
    slowed = bundle_file(tmp_path / "new.json", sample.sweep_bench(ops, SWEEP_SIZES, PEER_SIZES, jitter=0.02,
                                                                   slow={"swiglu": 1.5, "rotary": 1.02}))
    code, html = render(tmp_path, slowed, "--baseline", str(base))
    assert code == 0  # a regression is bench-gate's exit code, not the report's
    rows = re.findall(r'<tr class="verdict-[^"]*" data-verdict="([^"]*)" data-name="([^"]*)"', html)
    regressions = [name for verdict, name in rows if verdict == "regression"]
    assert regressions and all(name.startswith("swiglu/") for name in regressions)
    assert len(regressions) == sum(name.startswith("swiglu/") for _, name in rows)  # each of its benchmarks
    assert rows[:len(regressions)] == [("regression", n) for n in regressions]       # regressions listed first
    assert not any(v in ("regression", "improvement") for v, n in rows if n.startswith(("rotary/", "rms_norm/")))
    # the same decision as bench-gate's own
    gate = bench_gate.compare(bench_gate.load_run(str(base)), bench_gate.load_run(str(slowed)), bench_gate.Options())
    assert sorted(c.name for c in gate if c.verdict == "regression") == sorted(regressions)
    # drawn on the slowed op's charts, and on no other
    marks = {op: 0 for op in ops}
    for m in re.finditer(r'<figure class="scaling"[^>]*data-op="([^"]*)"[^>]*>(.*?)</figure>', html, re.S):
        marks[m.group(1)] += m.group(2).count('class="baseline-mark"')
    assert marks["swiglu"] == len(regressions) and marks["rotary"] == marks["rms_norm"] == 0
    assert f'id="bench-verdict">benchmarks: {len(regressions)} regression(s) vs baseline<' in html
    first_screen = html.split('<section id="scoreboard">')[0]
    assert 'id="baseline-table"' in first_screen and 'id="failures"' in first_screen


def test_same_runs_flag_nothing(tmp_path):
    path = bundle_file(tmp_path / "b.json", sample.sweep_bench(["rms_norm"], SWEEP_SIZES, PEER_SIZES))
    code, html = render(tmp_path, path, "--baseline", str(path))
    assert code == 0
    assert "bench-gate: pass" in html and 'data-verdict="regression"' not in html
    assert "benchmarks: no regression vs baseline" in html


def drifted(bench, factor):
    """The same Google Benchmark JSON on a host `factor` times slower for the whole run."""
    return {**bench, "benchmarks": [dict(e, real_time=e["real_time"] * factor, cpu_time=e["cpu_time"] * factor)
                                    for e in bench["benchmarks"]]}


def test_baseline_judges_against_the_runs_drift(tmp_path):
    """A host 30% slower for the whole run flags nothing (the absolute rule would flag every row); a slowed op
    under the same drift is flagged, and the table shows both the absolute change and the change against the
    drift, with the drift itself above it."""
    ops = ["rms_norm", "swiglu"]
    base = bundle_file(tmp_path / "base.json", sample.sweep_bench(ops, SWEEP_SIZES, PEER_SIZES, jitter=0.02))
    slower_host = bundle_file(tmp_path / "host.json",
                              drifted(sample.sweep_bench(ops, SWEEP_SIZES, PEER_SIZES, jitter=0.02), 1.3))
    code, html = render(tmp_path, slower_host, "--baseline", str(base))
    assert code == 0 and "bench-gate: pass" in html and 'data-verdict="regression"' not in html
    assert 'id="baseline-drift"' in html and "drift +30.0%" in html and "vs drift" in html
    fused = sample.sweep_bench(ops, SWEEP_SIZES, PEER_SIZES, jitter=0.02)
    for e in fused["benchmarks"]:
        if e["name"].startswith("swiglu/fused"):
            e["real_time"] *= 2.0
    slowed = bundle_file(tmp_path / "slowed.json", drifted(fused, 1.3))
    code, html = render(tmp_path, slowed, "--baseline", str(base))
    rows = re.findall(r'<tr class="verdict-[^"]*" data-verdict="([^"]*)" data-name="([^"]*)"', html)
    regressions = {name for verdict, name in rows if verdict == "regression"}
    assert regressions == {name for _, name in rows if name.startswith("swiglu/fused")} and regressions
    assert "+160.0%" in html and "+100.0%" in html  # one row: 2 x 1.3 in absolute time, 2x against the drift


@pytest.mark.parametrize("content, expected", [
    (None, "cannot read"),
    ("{not json", "invalid JSON"),
    (json.dumps(sample.bundle("cpu", [sample.case("a", "context")])), "embeds no benchmark results"),
])
def test_a_bad_baseline_is_exit_2_naming_the_file(tmp_path, capsys, content, expected):
    current = bundle_file(tmp_path / "b.json", sample.sweep_bench(["rms_norm"], SWEEP_SIZES[:2], PEER_SIZES[:1]))
    baseline = tmp_path / "old.json"
    if content is not None:
        baseline.write_text(content, encoding="utf-8")
    code, html = render(tmp_path, current, "--baseline", str(baseline))
    err = capsys.readouterr().err
    assert code == 2
    assert str(baseline) in err and expected in err
    assert 'id="baseline-error"' in html and expected in html  # the report is still written, saying why


def test_history_adds_each_ops_fused_trend(tmp_path):
    ops = ["rms_norm", "swiglu"]
    old = sample.bundle("cpu", [sample.case("a", "context")], created="2026-01-01T00:00:00Z",
                        benchmarks=sample.sweep_bench(ops, SWEEP_SIZES, PEER_SIZES))
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    new = sample.bundle("cpu", [sample.case("a", "context")], created="2026-02-01T00:00:00Z",
                        benchmarks=sample.sweep_bench(ops, SWEEP_SIZES, PEER_SIZES, slow={"swiglu": 1.5}))
    (tmp_path / "new.json").write_text(json.dumps(new), encoding="utf-8")
    code, html = render(tmp_path, tmp_path / "new.json", "--history", str(tmp_path / "old.json"))
    assert code == 0
    trends = re.search(r'id="bench-trends-table">(.*?)</table>', html, re.S).group(1)
    rows = re.findall(r"<tr><td>([^<]*)</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>"
                      r"<td>([^<]*)</td><td>[^<]*</td><td>([^<]*)</td>", trends)
    assert ("2026-02-01T00:00:00Z", "swiglu", "fwd", "8M", "fused.out", "1.50x") in rows  # the largest size
    assert ("2026-02-01T00:00:00Z", "rms_norm", "fwd", "8M", "fused.out", "1.00x") in rows
    assert ("2026-02-01T00:00:00Z", "swiglu", "fwd_bwd", "8M", "fused", "1.50x") in rows
