"""bench/python/gate_power_bench.py without the engine: the matrix it generates from the mutant catalog
(tests/mutants/aten/catalog.json), the rates it computes from a bundle's cases, its exit 2 on a mutant
library not built, and a whole run against a stand-in `crossdev` (a script writing the bundle the
matrix asks for) rendered by `crossdev report --gate-power`."""
import json
import sys
import textwrap

import pytest
import yaml

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "python"))
import gate_power_bench as bench  # noqa: E402

MUTANTS = bench.load_catalog()


def rows_of(text):
    doc = yaml.safe_load(text)
    assert doc["suite"] == "opinfo"
    return doc["cases"]


def test_each_rerun_has_its_seed_and_each_op_only_the_checks_its_targets_need():
    targets = ["tanh/forward", "tanh/backward", "sum/forward", "nn.functional.dropout/backward",
               "normal.in_place/forward"]
    rows = rows_of(bench.matrix_yaml("g2", targets, 3, "the gate's power"))
    assert [r["seed"] for r in rows] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert len({r["id"] for r in rows}) == len(rows), "row ids are unique"
    first = {tuple(r["checks"]): r["opinfo"] for r in rows if r["seed"] == 1}
    assert first == {("forward",): ["normal.in_place", "sum"], ("backward",): ["nn.functional.dropout"],
                     ("forward", "backward"): ["tanh"]}, first
    for r in rows:
        assert (r["devices"], r["dtypes"], r["max_samples"]) == (["cuda"], ["float32"], 8), r
        assert r["id"].endswith(f".s{r['seed']}") and r["id"].startswith("g2.")
    ids = bench.target_case_ids("g2", targets, 3)
    assert ids["tanh/backward"] == [f"g2.forward-backward.s{k}/tanh/cuda/float32/backward" for k in (1, 2, 3)]
    produced = {f"{r['id']}/{op}/cuda/float32/{check}" for r in rows for op in r["opinfo"] for check in r["checks"]}
    assert produced == {c for per_run in ids.values() for c in per_run}, "the matrix runs the targets, nothing else"


@pytest.mark.parametrize("group", sorted({m["group"] for m in MUTANTS}))
def test_every_target_case_of_the_catalog_is_in_its_groups_matrix(group):
    mutants = [m for m in MUTANTS if m["group"] == group]
    targets = bench.union_targets(mutants)
    rows = rows_of(bench.matrix_yaml(f"g{group}", targets, 2, "x"))
    produced = {f"{r['id']}/{op}/cuda/float32/{check}" for r in rows for op in r["opinfo"] for check in r["checks"]}
    for m in mutants:
        for per_run in bench.target_case_ids(f"g{group}", m["cases"], 2).values():
            assert len(per_run) == 2 and set(per_run) <= produced, (m["name"], per_run)


def test_a_mutants_cases_are_found_where_its_groups_matrix_put_them():
    """Another mutant of the group needs the op's backward: the op's row runs both checks, and the forward
    target is looked for there."""
    a = {"name": "a", "kind": "bug", "group": 1, "cases": ["sum/forward"]}
    b = {"name": "b", "kind": "bug", "group": 1, "cases": ["sum/backward"]}
    union = bench.union_targets([a, b])
    rows = rows_of(bench.matrix_yaml("g1", union, 1, "x"))
    assert [(r["opinfo"], r["checks"]) for r in rows] == [(["sum"], ["forward", "backward"])]
    cid = "g1.forward-backward.s1/sum/cuda/float32/forward"
    figures = bench.mutant_figures(a, {cid: case(cid, "fail")}, "g1", 1, union)
    assert figures["statuses"] == {"sum/forward": ["fail"]} and figures["caught"] == 1


def case(case_id, status, message=""):
    return {"id": case_id, "status": status, "message": message}


def test_a_bug_is_caught_by_fail_or_error_and_a_legitimate_difference_alarms_on_anything_but_pass():
    bug = {"name": "tanh_off", "kind": "bug", "group": 1, "rule": "r", "bug": "b", "aten": "tanh",
           "cases": ["tanh/forward", "tanh/backward"]}
    ids = bench.target_case_ids("g1", bug["cases"], 3)
    statuses = {"tanh/forward": ["fail", "error", "pass"], "tanh/backward": ["fail", "crash", None]}
    cases = {cid: case(cid, s, f"{s} message " + "x" * 400) for t, per_run in ids.items()
             for cid, s in zip(per_run, statuses[t]) if s}
    figures = bench.mutant_figures(bug, cases, "g1", 3)
    assert (figures["caught"], figures["runs"]) == (3, 6) and figures["rate"] == 0.5
    assert figures["statuses"] == {"tanh/forward": ["fail", "error", "pass"],
                                   "tanh/backward": ["fail", "crash", "missing"]}, "a crash is not caught; a case not run"
    assert figures["by_status"] == {"crash": 1, "error": 1, "fail": 2, "missing": 1, "pass": 1}
    assert figures["messages"]["tanh/forward"].startswith("fail message x")
    message = figures["messages"]["tanh/forward"]
    assert len(message) == bench.MESSAGE_CHARS and message.endswith("..."), "trimmed"
    assert "caught" in figures and "false_alarms" not in figures

    legit = dict(bug, name="sinh_ulp", kind="legitimate", cases=["sinh/forward"])
    ids = bench.target_case_ids("g4", legit["cases"], 3)["sinh/forward"]
    cases = {ids[0]: case(ids[0], "pass"), ids[1]: case(ids[1], "fail", "1 of 8 samples differ"),
             ids[2]: case(ids[2], "skip")}
    figures = bench.mutant_figures(legit, cases, "g4", 3)
    assert (figures["false_alarms"], figures["runs"]) == (2, 3) and "caught" not in figures
    assert figures["messages"] == {"sinh/forward": "1 of 8 samples differ"}

    clean_ids = bench.target_case_ids("clean", ["sinh/forward", "tanh/forward"], 2)
    cases = {cid: case(cid, "pass") for per_run in clean_ids.values() for cid in per_run}
    cases[clean_ids["tanh/forward"][1]] = case(clean_ids["tanh/forward"][1], "fail", "tanh differs")
    clean = bench.clean_figures(cases, "clean", ["sinh/forward", "tanh/forward"], 2)
    assert (clean["cases"], clean["runs"], clean["false_alarms"]) == (2, 4, 1)
    assert clean["messages"] == {"tanh/forward": "tanh differs"}


def test_a_mutant_library_not_built_is_exit_2_naming_its_path_and_make_test(tmp_path, capsys):
    (tmp_path / "lib").mkdir()
    for m in MUTANTS[1:]:
        bench.library_path(tmp_path, m["name"]).touch()
    rc = bench.main(["--build-dir", str(tmp_path), "--out", str(tmp_path / "gp.json"), "--crossdev", sys.executable])
    err = capsys.readouterr().err
    assert rc == 2 and str(bench.library_path(tmp_path, MUTANTS[0]["name"])) in err and "make test" in err, err
    assert not (tmp_path / "gp.json").exists()


def test_no_crossdev_command_is_exit_2(tmp_path, capsys):
    (tmp_path / "lib").mkdir()
    for m in MUTANTS:
        bench.library_path(tmp_path, m["name"]).touch()
    assert bench.main(["--build-dir", str(tmp_path), "--crossdev", str(tmp_path / "no-such-crossdev")]) == 2
    assert "no such command" in capsys.readouterr().err


# A stand-in for `crossdev run`: every case of the matrix; a case fails where a loaded mutant library is a
# bug mutant of the catalog targeting it (except sum under seed 2: a miss), its message naming the divergence.
FAKE_CROSSDEV = textwrap.dedent("""\
    import json, os, sys, yaml
    args = sys.argv[1:]
    assert args[0] == "run" and "--simulate" in args and args[args.index("--simulate") + 1] == "cuda"
    matrix = yaml.safe_load(open(args[args.index("--matrix") + 1]))
    out = args[args.index("--out") + 1]
    loaded = {os.path.basename(args[i + 1])[len("libcrossdev_test_aten_mutant_"):-3]
              for i, a in enumerate(args) if a == "--load-library"}
    catalog = json.load(open(CATALOG))["mutants"]
    bugs = {t for m in catalog if m["name"] in loaded and m["kind"] == "bug" for t in m["cases"]}
    cases = []
    for row in matrix["cases"]:
        for op in row["opinfo"]:
            for check in row["checks"]:
                fails = f"{op}/{check}" in bugs and not (op == "sum" and row["seed"] == 2)
                cases.append({"id": f"{row['id']}/{op}/cuda/float32/{check}", "status": "fail" if fails else "pass",
                              "message": f"<differs> diverge={os.environ['CROSSDEV_SIM_DIVERGE']}" if fails else ""})
    json.dump({"cases": cases}, open(out, "w"))
    sys.exit(1 if any(c["status"] == "fail" for c in cases) else 0)
    """)


@pytest.mark.parametrize("diverge, env", [("all", "all"), ("off", "0")])
def test_a_whole_run_against_a_stand_in_crossdev_and_its_report(tmp_path, diverge, env):
    from crossdev.report import sample
    from crossdev.report.render import main as render_main

    (tmp_path / "lib").mkdir()
    for m in MUTANTS:
        bench.library_path(tmp_path, m["name"]).touch()
    fake = tmp_path / "fake_crossdev.py"
    fake.write_text(f"CATALOG = {str(bench.CATALOG)!r}\n" + FAKE_CROSSDEV, encoding="utf-8")
    laws = tmp_path / "laws.json"
    laws.write_text(json.dumps({"alpha": 0.001, "ops": {"dropout": {"reruns": 10, "false_alarms": 0}}}))
    out = tmp_path / "gate_power.json"
    rc = bench.main(["--build-dir", str(tmp_path), "--crossdev", f"{sys.executable} {fake}", "--reruns", "2",
                     "--out", str(out), "--jobs", "3", "--diverge", diverge, "--random-laws", str(laws)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert not list(tmp_path.glob("*.tmp")), "written atomically"
    assert (doc["reruns"], doc["diverge"], doc["caught_statuses"], doc["errors"]) == (2, diverge, ["fail", "error"], [])
    assert doc["random_laws"]["ops"]["dropout"]["reruns"] == 10
    assert [m["name"] for m in doc["mutants"]] == [m["name"] for m in sorted(MUTANTS, key=lambda m: m["group"])]
    for m in doc["mutants"]:
        assert m["runs"] == 2 * len(m["cases"]), m
        if m["kind"] == "legitimate":
            assert m["false_alarms"] == 0 and m["rate"] == 0.0, m
        elif m["name"] == "sum_off_1e_minus_4":
            assert (m["caught"], m["statuses"]) == (1, {"sum/forward": ["fail", "pass"]}), m
        else:
            assert m["caught"] == m["runs"] and m["rate"] == 1.0, m
            assert all(msg == f"<differs> diverge={env}" for msg in m["messages"].values()), m
    union = bench.union_targets(MUTANTS)
    assert doc["clean"]["cases"] == len(union) and doc["clean"]["runs"] == 2 * len(union)
    assert doc["clean"]["false_alarms"] == 0

    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(sample.bundle("cpu", [sample.case("ops.x/cpu", "ops")])))
    assert render_main([str(bundle), "--out", str(tmp_path / "report"), "--gate-power", str(out)]) == 0
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert 'data-mutant="sum_off_1e_minus_4"' in page and "missed 1 of 2" in page and "&lt;differs&gt;" in page
