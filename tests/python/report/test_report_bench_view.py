"""The report's benchmark section: the roofline against the same-run triad, each figure labelled by
the device it ran on, min/median/max with noisy figures marked, bars grouped by op, all escaped."""
import json
import re

from crossdev.report import sample
from crossdev.report.render import main as render_main

XSS = '<script>alert("x")</script>'
M8 = 8 << 20


def entries(name, times_us, bytes_per_call, label="real cpu"):
    out = [{"name": name, "run_name": name, "run_type": "iteration", "iterations": 10, "real_time": t,
            "cpu_time": t, "time_unit": "us", "bytes_per_call": float(bytes_per_call),
            "bytes_per_second": bytes_per_call / (t * 1e-6), "minflt_per_call": 8192.0, "label": label,
            "repetitions": len(times_us), "repetition_index": i} for i, t in enumerate(times_us)]
    median = sorted(times_us)[len(times_us) // 2]
    out.append(dict(out[0], name=name + "_median", run_type="aggregate", aggregate_name="median", real_time=median,
                    cpu_time=median, bytes_per_second=bytes_per_call / (median * 1e-6)))
    return out


def bench_doc(op="rms_norm", allocator="system (glibc malloc)"):
    triad, op_bytes = 3 * M8 * 4, 2 * M8 * 4
    benchmarks = (entries("stream_triad/aten.out/float32/8M/cpu/fwd", [triad / 10e9 * 1e6] * 3, triad)
                  + entries(f"{op}/fused.out/float32/8M/cpu/fwd", [op_bytes / 8e9 * 1e6] * 3, op_bytes)
                  + entries(f"{op}/fused/float32/8M/cpu/fwd", [3000.0, 3600.0, 2400.0], op_bytes)   # CV 20%
                  + entries(f"{op}/fallback/float32/8M/cpu/fwd", [9000.0, 9001.0, 8999.0], op_bytes))
    return {"context": {"crossdev_allocator": allocator, "crossdev_cpu_capability": "AVX512",
                        "crossdev_aten_threads": "2", "crossdev_affinity": "0,1", "crossdev_execution": "real"},
            "benchmarks": benchmarks}


def section(tmp_path, bench, simulated=True):
    doc = sample.bundle("cpu", [sample.case("a", "context")], benchmarks=bench, simulated=simulated,
                        simulate_spec="cuda:2,mps" if simulated else "")
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert render_main([str(path), "--out", str(tmp_path / "out")]) == 0
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    return re.search(r'id="benchmarks">(.*?)</section>', html, re.S).group(1)


def test_scaling_chart_against_the_same_run_triad_with_caption(tmp_path):
    html = section(tmp_path, bench_doc())
    figure = re.search(r'<figure class="scaling" id="scale-[^"]*rms_norm[^"]*-fwd"[^>]*>(.*?)</figure>', html, re.S).group(1)
    assert "<svg" in figure and "STREAM triad at 8M, same run: 10.00 GB/s" in figure  # the triad reference
    assert "median 8.00 GB/s" in figure and "80% of the triad" in figure  # fused.out at 8 GB/s = 80% of the triad
    assert "allocator system (glibc malloc)" in html and "CPU capability AVX512" in html


def test_bench_figures_are_labelled_by_the_device_they_ran_on(tmp_path):
    """The conformance run simulated cuda and mps; the benchmarks ran on the real CPU and say so."""
    html = section(tmp_path, bench_doc(), simulated=True)
    assert "SIMULATED" not in html
    assert "real cpu" in html
    label = entries("x/fused/float32/1M/cpu/fwd", [1.0], 8, label="simulated mps")
    html = section(tmp_path, {"context": {}, "benchmarks": label}, simulated=False)
    assert "simulated mps" in html


def test_spread_and_noisy_marking(tmp_path):
    html = section(tmp_path, bench_doc())
    table = re.search(r'id="bandwidth-table">(.*?)</table>', html, re.S).group(1)
    fused = re.search(r"<tr><td>rms_norm/fused/float32/8M/cpu/fwd</td>(.*?)</tr>", table).group(1)
    cells = re.findall(r"<td>(.*?)</td>", fused)
    assert cells[:7] == ["real cpu", "fused", "3000.00", "2400.00", "3600.00", "20.0%", "NOISY"]
    steady = re.search(r"<tr><td>rms_norm/fallback/float32/8M/cpu/fwd</td>(.*?)</tr>", table).group(1)
    assert "NOISY" not in steady
    assert 'class="whisker"' in html  # min..max drawn on the points
    assert re.search(r'<circle[^>]*class="point noisy"[^>]*data-series="fused"', html)  # the noisy point is marked
    assert not re.search(r'<circle[^>]*class="point noisy"[^>]*data-series="fallback"', html)
    # the ratio chart: fused (3000 us) against the best other impl (fallback, 9000 us), noisy because fused is
    assert "8M: fused is 3.00x the speed of the best other impl (fallback) — NOISY" in html


def test_one_chart_per_op_and_pass_with_a_line_per_impl(tmp_path):
    html = section(tmp_path, bench_doc())
    figures = re.findall(r'<figure class="scaling"[^>]*data-op="([^"]*)" data-pass="([^"]*)"', html)
    assert figures == [("rms_norm", "fwd")]  # the triad is the reference line, not a chart of its own
    svg = re.search(r'<figure class="scaling".*?(<svg.*?</svg>)', html, re.S).group(1)
    legend = re.findall(r'<text[^>]*class="legend"[^>]*>(.*?)</text>', svg)
    assert legend == ["fused.out", "fused", "fallback", "triad"]


def test_roofline_strings_are_escaped(tmp_path):
    html = section(tmp_path, bench_doc(op=XSS.replace("/", "|"), allocator=XSS))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_caption_prefers_the_peers_driver_context_and_names_a_different_cpp_allocator(tmp_path):
    """make report merges the driver's JSON into crossdev_bench's: its keys arrive as crossdev_peers_*."""
    doc = bench_doc()
    doc["context"]["crossdev_peers_allocator"] = "tcmalloc (/usr/lib/libtcmalloc_minimal.so.4, LD_PRELOAD)"
    assert ("allocator tcmalloc (/usr/lib/libtcmalloc_minimal.so.4, LD_PRELOAD) "
            "(crossdev_bench: system (glibc malloc))") in section(tmp_path, doc)
