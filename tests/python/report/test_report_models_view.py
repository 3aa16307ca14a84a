"""The report's models section (docs/models.md, "In the report"): per model and dtype a chart of the
error along the depth (one inherited polyline per device, own dashed, the tolerance band, the first
divergence marked), the train check's loss curves, and a table of the cases with first_divergence;
on bundles made with crossdev.report.sample (the models suite's case records: details and `data`)."""
import html
import random
import json
import re

from crossdev.report import sample
from crossdev.report.render import main as render_main
from crossdev.report.validate import run as validate_run


def render_section(tmp_path, *bundles):
    paths = []
    for i, doc in enumerate(bundles):
        paths.append(tmp_path / f"b{i}.json")
        paths[-1].write_text(json.dumps(doc), encoding="utf-8")
    assert validate_run([str(p) for p in paths]) == 0
    out = tmp_path / "out"
    assert render_main([*map(str, paths), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    start = page.find('<section id="models">')
    return page[start:page.find("</section>", start)] if start >= 0 else ""


def charts(section, kind):
    return re.findall(rf'<svg [^>]*class="{kind}"[^>]*>.*?</svg>', section, flags=re.S)


def polylines(svg, css_class):
    return re.findall(rf'<polyline [^>]*class="{css_class}"', svg)


def test_one_inherited_line_per_device_own_dashed_where_localised_and_the_divergence_marked(tmp_path):
    cases = [sample.models_case("dit_block", "cuda", "float32"),
             sample.models_case("dit_block", "mps", "float32", status="fail", culprit="mlp.act"),
             sample.models_case("dit_block", "xpu", "float32")]
    section = render_section(tmp_path, sample.bundle("cuda", cases))
    [chart] = charts(section, "depth-chart")
    assert len(polylines(chart, "inherited")) == 3, chart  # one per device
    assert len(polylines(chart, "own")) == 1  # only the failing, localised device has own errors
    assert 'stroke-dasharray="5 3" class="own"' in chart
    assert len(polylines(chart, "limit")) == 1 and 'class="tolerance"' in chart
    assert len(re.findall(r'class="divergence"', chart)) == 1
    assert "first divergence: mlp.act at aten::gelu" in chart
    # The x axis is the module calls in execution order, one label each.
    labels = [html.unescape(t) for t in re.findall(r'<text [^>]*transform="rotate[^>]*><title>([^<]*)</title>', chart)]
    assert labels == [path for path, _ in sample.DIT_CALLS], labels
    # Out-of-tolerance points are ringed: the culprit's own error and what inherits it.
    assert chart.count('class="fails"') >= 2
    table = section[section.find('class="grid models"'):]
    assert "models.dit_block/mps/float32" in table and "aten::gelu" in table and "mlp.act" in table


def test_train_cases_draw_the_golden_float64_and_each_devices_loss_curve(tmp_path):
    losses = sample.loss_curves(steps=4)
    cases = [sample.models_case("llama_train", kind, "float32", losses=losses, checks=("forward", "train"))
             for kind in ("cuda", "mps")]
    section = render_section(tmp_path, sample.bundle("cuda", cases))
    [chart] = charts(section, "loss-chart")
    titles = re.findall(r'<polyline [^>]*class="loss"[^>]*><title>([^<]*)</title>', chart)
    assert titles == ["CPU golden", "float64 (CPU)", "cuda", "mps"], titles
    assert len(re.findall(r"<circle ", chart)) == 4 * len(losses["golden"])


def test_hostile_module_names_are_escaped(tmp_path):
    calls = [("(model)", None), ('<script>alert(1)</script>', 0), ('a"onload="x', 0)]
    case = sample.models_case("evil", "cuda", "float32", status="fail", culprit='<script>alert(1)</script>',
                              calls=calls)
    case["row_id"] = "<b>row</b>"
    section = render_section(tmp_path, sample.bundle("cuda", [case]))
    assert "<script>" not in section and "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert 'a"onload' not in section and "<b>row</b>" not in section


def test_cases_without_data_are_in_the_table_only_and_old_bundles_render(tmp_path):
    bare = sample.models_case("dit_block", "cuda", "float32")
    del bare["data"]  # a bundle from before `data`, or a skipped case
    section = render_section(tmp_path, sample.bundle("cuda", [bare]))
    assert not charts(section, "depth-chart") and "models.dit_block/cuda/float32" in section


def test_without_models_cases_the_section_is_absent(tmp_path):
    assert render_section(tmp_path, sample.bundle("cpu", [sample.case("ops.x/cpu", "ops")])) == ""


def test_the_schema_rejects_malformed_layers(tmp_path, capsys):
    case = sample.models_case("dit_block", "cuda", "float32")
    case["data"]["layers"][0]["phase"] = "sideways"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(sample.bundle("cuda", [case])), encoding="utf-8")
    assert validate_run([str(path)]) == 2
    assert "data.layers[0] (module '(model)').phase: expected one of forward, backward" in capsys.readouterr().err


ODD_NUMBERS = [None, 0, -0.0, -1, 5e-324, 1e-300, 1e-7, 0.5, 2, 1.7976931348623157e308, "1e999"]


def test_schema_valid_odd_data_renders(tmp_path):
    """Numbers at the float64 edges (subnormals, the largest, 1e999 read as inf, negatives, nulls),
    repeated or unknown call indices, losses of any length: validated, then rendered (exit 0)."""
    r = random.Random(0)
    for trial in range(40):
        cases = []
        for _ in range(r.randint(1, 3)):
            case = sample.models_case("m", r.choice(["cuda", "mps"]), "float32")
            case["data"] = {"layers": [
                {"module": r.choice(["", "a", "a.b"]), "call": r.choice([0, 1, 2, 10 ** 9, -5]),
                 "parent": r.choice([None, 0]), "phase": r.choice(["forward", "backward"]),
                 **{key: r.choice(ODD_NUMBERS) for key in ("inherited", "own", "limit")},
                 "inherited_passed": r.choice([None, True, False]), "own_passed": r.choice([None, True, False])}
                for _ in range(r.randint(0, 6))]}
            if r.random() < 0.5:
                case["data"]["losses"] = {run: [r.choice(ODD_NUMBERS) for _ in range(r.randint(0, 4))]
                                          for run in r.sample(["golden", "float64", "device"], r.randint(0, 3))}
            if r.random() < 0.5:
                case["data"]["first_divergence_call"] = r.choice([0, 1, 10 ** 9])
                case["details"].update(first_divergence="a", first_divergence_phase=r.choice(["forward", "backward"]))
            cases.append(case)
        path = tmp_path / f"odd{trial}.json"
        path.write_text(json.dumps(sample.bundle("cuda", cases)).replace('"1e999"', "1e999"), encoding="utf-8")
        assert validate_run([str(path)]) == 0, path.read_text()[:400]
        assert render_main([str(path), "--out", str(tmp_path / f"out{trial}")]) == 0, path.read_text()[:400]
