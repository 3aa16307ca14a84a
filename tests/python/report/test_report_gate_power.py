"""The report's "What this gate catches" (crossdev report --gate-power FILE: bench/python/gate_power_bench.py's
JSON, docs/opinfo.md "The gate's power") and the summary's "Skips by reason" (details.skip_reason, a key of
crossdev.opinfo.skip_reasons.SKIP_REASONS), on synthetic bundles (crossdev.report.sample): no compiled core."""
import html
import json
import re

import pytest

from crossdev.opinfo.skip_reasons import SKIP_REASONS
from crossdev.report import sample
from crossdev.report.render import main as render_main
from crossdev.report.summary_md import md_escape

NASTY = '<script>alert("x")</script> & \'quoted\''


def statuses(*per_target):
    return {target: list(runs) for target, runs in per_target}


def gate_power_doc():
    return {
        "reruns": 3, "diverge": "all", "kind": "cuda", "dtype": "float32", "max_samples": 8,
        "caught_statuses": ["fail", "error"], "seconds": 12.5, "errors": [],
        "mutants": [
            {"name": "tanh_off_by_1_in_256", "kind": "bug", "group": 2, "rule": "the dtype's tolerance", "aten": "tanh",
             "bug": "tanh off by 1 part in 256", "cases": ["tanh/forward", "tanh/backward"], "runs": 6, "caught": 6,
             "rate": 1.0, "by_status": {"fail": 6},
             "statuses": statuses(("tanh/forward", ["fail"] * 3), ("tanh/backward", ["fail"] * 3)),
             "messages": {"tanh/forward": "2 of 8 samples differ from the CPU",
                          "tanh/backward": "8 of 8 samples differ from the CPU"}},
            {"name": "sum_off_1e_minus_4", "kind": "bug", "group": 2, "rule": "the float64 rule, element by element",
             "aten": "sum.IntList_out", "bug": NASTY, "cases": ["sum/forward"], "runs": 3, "caught": 2,
             "rate": 2 / 3, "by_status": {"error": 1, "fail": 1, "pass": 1},
             "statuses": statuses(("sum/forward", ["fail", "pass", "error"])),
             "messages": {"sum/forward": "<img src=x onerror=alert(1)> differs"}},
            {"name": "sinh_one_ulp", "kind": "legitimate", "group": 4, "rule": "the dtype's tolerance", "aten": "sinh",
             "bug": "sinh one ULP up", "cases": ["sinh/forward"], "runs": 3, "false_alarms": 0, "rate": 0.0,
             "by_status": {"pass": 3}, "statuses": statuses(("sinh/forward", ["pass"] * 3)), "messages": {}},
            {"name": "linalg_eigh_flip_signs", "kind": "legitimate", "group": 4,
             "rule": "output_process_fn_grad (eigenvector signs open)", "aten": "_linalg_eigh",
             "bug": "eigenvectors with other signs", "cases": ["linalg.eigh/forward"], "runs": 3, "false_alarms": 1,
             "rate": 1 / 3, "by_status": {"fail": 1, "pass": 2},
             "statuses": statuses(("linalg.eigh/forward", ["pass", "fail", "pass"])),
             "messages": {"linalg.eigh/forward": "1 of 8 samples differ"}},
        ],
        "clean": {"cases": 4, "runs": 12, "false_alarms": 0, "rate": 0.0, "by_status": {"pass": 12},
                  "statuses": {}, "messages": {}},
        # bench/python/random_false_alarm_bench.py's --out
        "random_laws": {"alpha": 0.0001, "draw_values": 100000, "error": 0.1, "threads": 1,
                        "ops": {"uniform": {"aten": ["uniform_"], "reruns": 100, "false_alarms": 0,
                                            "false_alarm_rate": 0.0, "seconds": 3.2,
                                            "detection": {"from": {"reruns": 20, "detected": 20, "rate": 1.0},
                                                          "to": {"reruns": 20, "detected": 20, "rate": 1.0}}},
                                NASTY: {"aten": ["bernoulli_"], "reruns": 100, "false_alarms": 1,
                                        "false_alarm_rate": 0.01, "seconds": 1.0,
                                        "detection": {"p": {"reruns": 20, "detected": 19, "rate": 0.95}}}},
                        "total": {"reruns": 200, "false_alarms": 1, "false_alarm_rate": 0.005, "mutant_reruns": 60,
                                  "detected": 59, "worst_detection_rate": 0.95, "seconds": 4.2}},
    }


def opinfo_skip(op, reason=None):
    case = sample.opinfo_case(op, "mps", "float32", "forward", status="skip", execution="not_run")
    if reason:
        case["details"]["skip_reason"] = reason
    return case


def skip_bundle():
    cases = [sample.opinfo_case("sin", "mps", "float32", "forward", execution="simulated"),
             opinfo_skip("histogram", "declared_gap"), opinfo_skip("sparse.mm", "declared_gap"),
             opinfo_skip("tan", "variant_missing"), opinfo_skip("cos"),  # no reason recorded: "other"
             sample.case("ops.x/cpu", "ops", status="skip")]  # not an opinfo case: not counted
    return sample.bundle("cpu", cases, host="cpu-runner", simulated=True, simulate_spec="mps")


def render(tmp_path, doc, gate_power=None, raw=None):
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(doc), encoding="utf-8")
    args = [str(bundle), "--out", str(tmp_path / "out")]
    if gate_power is not None or raw is not None:
        path = tmp_path / "gate_power.json"
        path.write_text(raw if raw is not None else json.dumps(gate_power), encoding="utf-8")
        args += ["--gate-power", str(path)]
    rc = render_main(args)
    return rc, (tmp_path / "out" / "index.html").read_text(encoding="utf-8"), \
        (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")


def section(page, anchor):
    start = page.find(f'<section id="{anchor}">')
    return page[start:page.find("</section>", start)] if start >= 0 else ""


def table_rows(section_html, table_id):
    start = section_html.find(f'id="{table_id}"')
    assert start >= 0, table_id
    body = section_html[start:section_html.find("</table>", start)]
    return re.findall(r"<tr>(.*?)</tr>", body[body.find("<tbody>"):], flags=re.S)


def cells(row):
    return [html.unescape(re.sub(r"<[^>]+>", " ", c)).split() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


def row_of_text(section_html, table_id, text):
    return next(r for r in table_rows(section_html, table_id) if text in r)


def row_of(section_html, table_id, mutant):
    return next(r for r in table_rows(section_html, table_id) if f'data-mutant="{mutant}"' in r)


@pytest.fixture
def rendered(tmp_path):
    return render(tmp_path, skip_bundle(), gate_power_doc())


def test_a_mutant_caught_every_time_and_one_missed_are_told_apart(rendered):
    rc, page, _ = rendered
    assert rc == 0
    gate = section(page, "gate-power")
    assert "<h2>What this gate catches</h2>" in gate and 'href="#gate-power"' in page
    caught = row_of(gate, "gate-power-bugs", "tanh_off_by_1_in_256")
    assert 'class="badge st-ok">caught every time<' in caught
    assert cells(caught)[5:7] == [["6", "of", "6"], ["100%"]], cells(caught)
    assert "the dtype&#x27;s tolerance" in caught and "tanh/backward" in caught
    missed = row_of(gate, "gate-power-bugs", "sum_off_1e_minus_4")
    assert 'class="badge st-bad">missed 1 of 3<' in missed
    assert cells(missed)[5:7] == [["2", "of", "3"], ["67%"]], cells(missed)
    assert 'title="error 1, fail 1, pass 1"' in missed, "which statuses caught it"
    assert [s for s in re.findall(r'class="badge st-\w+">(\w+)<', missed)][:3] == ["fail", "pass", "error"]
    assert "1 of 2 bug mutant(s) caught every time; 8 of 9 (target case, rerun) pairs caught (89%)." in gate
    assert "seeds 1 to 3" in gate and "CROSSDEV_SIM_DIVERGE=all" in gate and "fail or error" in gate


def test_legitimate_differences_show_their_false_alarms_and_the_clean_run_its_own(rendered):
    gate = section(rendered[1], "gate-power")
    assert 'class="badge st-ok">no false alarm<' in row_of(gate, "gate-power-legitimate", "sinh_one_ulp")
    eigh = row_of(gate, "gate-power-legitimate", "linalg_eigh_flip_signs")
    assert 'class="badge st-bad">1 false alarm(s)<' in eigh and cells(eigh)[5] == ["1", "of", "3"]
    assert "1 false alarm(s) in 6 (target case, rerun) pairs." in gate
    clean = gate[gate.find('id="gate-power-clean"'):]
    assert "4 target case(s), 12 run(s): 0 false alarm(s)" in clean and "every case passed" in clean


def test_every_string_of_the_file_is_escaped(rendered):
    gate = section(rendered[1], "gate-power")
    assert "<script>" not in gate and "<img" not in gate
    assert html.escape(NASTY, quote=True) in gate, "the bug text and the random-law op name, as text"
    assert "&lt;img src=x onerror=alert(1)&gt; differs" in gate


def test_the_random_law_figures_are_shown_when_embedded(rendered, tmp_path):
    gate = section(rendered[1], "gate-power")
    assert "Random ops by their law" in gate and "alpha: 0.0001; draw_values: 100000; error: 0.1" in gate
    uniform = row_of_text(gate, "random-laws-ops", "<td>uniform</td>")
    assert cells(uniform)[:4] == [["uniform"], ["uniform_"], ["0", "of", "100"], ["0%"]], cells(uniform)
    assert cells(uniform)[4] == ["from", ":", "20", "of", "20", "(100%)", "to", ":", "20", "of", "20", "(100%)"]
    assert 'class="badge st-ok">no false alarm, every error detected<' in uniform
    nasty = row_of_text(gate, "random-laws-ops", html.escape(NASTY, quote=True))
    assert 'class="badge st-bad">1 false alarm(s), 1 miss(es)<' in nasty
    assert "<th>a law off by 10%: detected</th>" in gate
    assert "All ops: 1 false alarm(s) in 200 clean case(s) (0%); 59 of 60 wrong laws detected (98%), " \
           "worst parameter 0.95." in gate
    doc = gate_power_doc()
    del doc["random_laws"]
    (tmp_path / "again").mkdir()
    assert "Random ops by their law" not in section(render(tmp_path / "again", skip_bundle(), doc)[1], "gate-power")


def test_random_law_figures_of_another_shape_still_render_escaped(tmp_path):
    doc = gate_power_doc()
    doc["random_laws"] = {"draws": 32, "ops": {"dropout": {"reruns": 1000, "false_alarms": 1}},
                          "other": {NASTY: [1, 2]}, "notes": [NASTY]}
    gate = section(render(tmp_path, skip_bundle(), doc)[1], "gate-power")
    assert "draws: 32" in gate and "<script>" not in gate and "&lt;script&gt;" in gate
    assert cells(row_of_text(gate, "random-laws-ops", "<td>dropout</td>"))[2] == ["1", "of", "1000"]


def test_without_a_gate_power_file_the_section_is_absent(tmp_path):
    rc, page, _ = render(tmp_path, skip_bundle())
    assert rc == 0 and section(page, "gate-power") == "" and 'href="#gate-power"' not in page


@pytest.mark.parametrize("raw, words", [("{not json", "not JSON"),
                                        ('{"mutants": 3}', "expected an object with a `mutants`")])
def test_a_bad_gate_power_file_is_exit_2_shown_in_its_section_not_in_the_verdict(tmp_path, capsys, raw, words):
    rc, page, _ = render(tmp_path, sample.bundle("cpu", [sample.case("ops.x/cpu", "ops")]), raw=raw)
    assert rc == 2 and words in capsys.readouterr().err
    assert words in section(page, "gate-power")
    assert 'id="verdict">PASS<' in page, "the conformance verdict is the bundles'"


def test_skips_are_counted_by_runner_and_reason_in_the_summary(rendered):
    _, page, markdown = rendered
    summary = section(page, "summary")
    assert "Skips by reason (opinfo)" in summary
    header = re.findall(r"<th>(.*?)</th>", summary[summary.find('id="skip-reasons"'):])
    labels = [html.unescape(re.sub(r"<[^>]+>", "", h)) for h in header]
    reasons = [r for r in SKIP_REASONS if r in ("declared_gap", "variant_missing")]  # the table's order
    assert labels == ["runner", *reasons, "other", "total"], labels
    assert f'title="{html.escape(SKIP_REASONS["declared_gap"], quote=True)}"' in summary
    row = table_rows(summary, "skip-reasons")[0]
    count = {"declared_gap": "2", "variant_missing": "1"}
    assert cells(row)[1:] == [[count[r]] for r in reasons] + [["1"], ["4"]], cells(row)
    escaped = [r.replace("_", "\\_") for r in reasons]
    assert f"| runner | {escaped[0]} | {escaped[1]} | other |" in markdown, markdown
    assert f"| cpu@cpu-runner+sim | {count[reasons[0]]} | {count[reasons[1]]} | 1 |" in markdown, markdown
    assert f"- declared\\_gap: {md_escape(SKIP_REASONS['declared_gap'])}" in markdown


def test_without_opinfo_skips_there_is_no_skip_table(tmp_path):
    _, page, markdown = render(tmp_path, sample.bundle("cpu", [sample.case("ops.x/cpu", "ops", status="skip")]))
    assert "skip-reasons" not in page and "Skips by reason" not in markdown
