"""The report's OpInfo section: a heat map of ops x devices, a scoreboard per device, and the failing
samples behind each failing row, on bundles made with crossdev.report.sample (the OpInfo suite's case
records: details op, dtype, check, device_kind, failing_samples)."""
import html
import json
import re

from crossdev.report import sample
from crossdev.report.render import main as render_main


def opinfo_case(op, kind, dtype, check, status="pass", execution="real", runner_device=None, samples=""):
    case = sample.opinfo_case(op, kind, dtype, check, status=status, execution=execution, failing_samples=samples)
    if runner_device:
        case["device"] = runner_device
    return case


def render_section(tmp_path, *bundles):
    paths = []
    for i, doc in enumerate(bundles):
        paths.append(tmp_path / f"b{i}.json")
        paths[-1].write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "out"
    assert render_main([*map(str, paths), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    start = page.find('<section id="opinfo">')
    return page[start:page.find("</section>", start)] if start >= 0 else ""


def heat_cells(section):
    """{title text: fill} of the heat map's cells."""
    return {html.unescape(t): f for f, t in re.findall(r'<rect [^>]*fill="([^"]+)"[^>]*><title>([^<]*)</title>', section)}


def test_a_failing_op_is_red_on_its_device_only_and_its_samples_are_behind_the_row(tmp_path):
    cases = [opinfo_case("sin", "cuda", "float32", "forward"), opinfo_case("sin", "cuda", "float32", "backward"),
             opinfo_case("tan", "cuda", "float32", "forward", status="fail",
                         samples="sample 0 shapes [(5, 5)]: Mismatched elements: 3 / 25 <script>x</script>"),
             opinfo_case("tan", "cuda", "float32", "backward")]
    section = render_section(tmp_path, sample.bundle("cuda", cases))
    cells = heat_cells(section)
    tan = next(f for t, f in cells.items() if t.startswith("tan on cuda"))
    sin = next(f for t, f in cells.items() if t.startswith("sin on cuda"))
    assert tan.startswith("hsl(356") and sin == "#2da44e", cells
    assert "1 failing case(s)" in section and "Mismatched elements: 3 / 25" in section
    assert "<script>x</script>" not in section and "&lt;script&gt;x&lt;/script&gt;" in section


def test_simulated_devices_are_labelled_and_each_runner_has_its_own_columns(tmp_path):
    real = sample.bundle("cuda", [opinfo_case("sin", "cuda", "float32", "forward")], host="gpu-runner")
    simulated = sample.bundle("cpu", [opinfo_case("sin", "mps", "float32", "forward", execution="simulated"),
                                      opinfo_case("sin", "mps", "float32", "backward", status="skip",
                                                  execution="not_run", runner_device="mps:0")],
                              host="cpu-runner", simulated=True, simulate_spec="mps")
    section = render_section(tmp_path, real, simulated)
    titles = list(heat_cells(section))
    assert any(t.startswith("sin on cuda (") and "SIMULATED" not in t for t in titles), titles
    mps = [t for t in titles if t.startswith("sin on mps")]
    assert len(mps) == 1 and "SIMULATED" in mps[0], titles  # the not-run case stays in the simulated column
    assert section.count('class="badge sim"') == 1 and section.count('class="badge real"') == 1


def test_only_expected_failures_are_not_red_and_counts_sort_as_numbers(tmp_path):
    cases = [opinfo_case("exp", "cuda", "bfloat16", "forward", status="xfail")]
    section = render_section(tmp_path, sample.bundle("cuda", cases))
    assert next(iter(heat_cells(section).values())) == "#d0d7de"
    assert 'class="grid opinfo-scoreboard"' in section  # report.js sorts table.grid columns


def test_without_opinfo_cases_the_section_is_absent(tmp_path):
    assert render_section(tmp_path, sample.bundle("cpu", [sample.case("ops.x/cpu", "ops")])) == ""


def test_a_simulated_scoreboard_says_which_kernel_ran_per_check(tmp_path):
    forward = opinfo_case("native_layer_norm", "mps", "float32", "forward", execution="simulated")
    forward["details"].update(kernel_source="composite", device_kernels="composite: aten::native_layer_norm")
    backward = opinfo_case("native_layer_norm", "mps", "float32", "backward", execution="simulated")
    backward["details"].update(kernel_source="cpu_fallback", device_kernels="cpu_fallback: aten::native_layer_norm_backward")
    real = sample.bundle("cuda", [opinfo_case("sin", "cuda", "float32", "forward")], host="gpu-runner")
    section = render_section(tmp_path, real, sample.bundle("cpu", [forward, backward], host="cpu-runner",
                                                           simulated=True, simulate_spec="mps"))
    assert 'title="composite: aten::native_layer_norm"' in section and "composite (forward)" in section
    assert "cpu_fallback (backward)" in section
    assert section.count("device kernel (hover: ATen ops)") == 1  # the real device's scoreboard has no such column


def xla_case(op, source, status="pass", compiles=2, compile_s=0.5):
    case = opinfo_case(op, "xla", "float32", "forward", status=status)
    case["details"].update(kernel_source=source, device_kernels="lowered: mm" if source != "xla_cpu_fallback" else
                           "aten cpu fallback: roll")
    case.setdefault("metrics", {}).update(xla_compiles=float(compiles), xla_compile_s=compile_s)
    return case


def test_a_real_xla_column_says_what_was_lowered_what_never_left_the_cpu_and_what_compiled(tmp_path):
    """torch_xla's counters (crossdev/xla_lowering.py): the OpInfo section counts lowered and fallback
    cases per runner, the passes that never left the CPU (plumbing only), graphs compiled and their time,
    and the real column's scoreboard shows what ran per op, beside a simulated xla column of another runner."""
    real = sample.bundle("xla", [xla_case("mm", "xla_lowered", compiles=3, compile_s=1.25),
                                 xla_case("roll", "xla_cpu_fallback", compiles=0, compile_s=0.0),
                                 xla_case("cat", "xla_partly_fallback", status="fail", compiles=4, compile_s=0.5)],
                         host="xla-runner")
    simulated = sample.bundle("cpu", [opinfo_case("mm", "xla", "float32", "forward", execution="simulated")],
                              host="cpu-runner", simulated=True, simulate_spec="xla")
    section = render_section(tmp_path, real, simulated)
    start = section.find("What ran on XLA")
    assert start >= 0, section[:500]
    table = section[start:section.find("</table>", start)]
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", table)]
    # runner, kind, lowered, partly, only fallback, transfers only, plumbing-only passes, graphs, seconds
    assert cells[1:9] == ["xla", "1", "1", "1", "0", "1", "7", "1.75"], cells
    assert len(cells) == 9  # the simulated xla column's cases have no XLA counters: no row of their own
    assert "xla_cpu_fallback (forward)" in section and "SIMULATED" in section
