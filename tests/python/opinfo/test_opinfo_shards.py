"""`crossdev run --shard I/N` (docs/opinfo.md, "Sharding"): the N shards' bundles, merged with
`crossdev merge`, give the report of one unsharded run: the same cases, and the same OpInfo heat map
and scoreboards (one runner, not one per shard), and the same stale expectation entries (those that no
shard matched). The three runs (unsharded, 1/2, 2/2) go side by side;
one row, five ops, one sample each, on the CPU (no sim), --no-isolate (the Python worker isolates the
cases; no matrix worker process to start)."""
import json
import os
import subprocess
import textwrap

from conftest import BUILD_DIR, INSTALLED, ROOT, crossdev_command

MATRIX = """\
suite: opinfo
cases:
  - {id: t.sh, source: "issue 24", intent: "test", opinfo: "[st][ia]n*", devices: [cpu], dtypes: [float32],
     max_samples: 1}
"""
# An xfail that passes (xpass: a failing cell) and a skip: the scoreboard has more than passes. Each
# matches the cases of one shard only (unmatched in the other: not stale); cos is selected by no shard
# (stale).
EXPECTATIONS = """\
expectations:
  - {match: "t.sh/tan/*", status: xfail, reason: "passes on purpose", class: numerics}
  - {match: "t.sh/sinc/*", status: skip, reason: "skipped on purpose"}
  - {match: "t.sh/cos/*", status: xfail, reason: "stale on purpose", class: numerics}
"""


def _run_side_by_side(tmp_path, runs):
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"), env.get("PYTHONPATH")]))
    procs = [subprocess.Popen([*crossdev_command(), "run", "--no-isolate", "--matrix", str(tmp_path / "m.yaml"), *extra,
                               "--out", str(tmp_path / out)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=env, cwd=ROOT) for out, extra in runs]
    for proc, (out, _) in zip(procs, runs):
        output, _ = proc.communicate(timeout=300)
        assert proc.returncode in (0, 1) and (tmp_path / out).exists(), f"a broken run:\n{output}"


def _section(report_dir):
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    start = page.find('<section id="opinfo">')
    assert start >= 0, "no OpInfo section"
    return page[start:page.find("</section>", start)]


def test_merged_shards_give_the_report_of_one_unsharded_run(tmp_path, cli):
    from crossdev.report.merge import merge
    from crossdev.report.views.opinfo_view import collect

    (tmp_path / "m.yaml").write_text(MATRIX)
    (tmp_path / "expectations" / "opinfo").mkdir(parents=True)
    (tmp_path / "expectations" / "opinfo" / "cpu.yaml").write_text(textwrap.dedent(EXPECTATIONS))
    _run_side_by_side(tmp_path, [("whole.json", []), ("s1.json", ["--shard", "1/2"]), ("s2.json", ["--shard", "2/2"])])
    merged = cli("merge", tmp_path / "s1.json", tmp_path / "s2.json", "--out", tmp_path / "merged.json")
    assert merged.returncode == 0, merged.stderr

    def cases(path):
        doc = json.loads(path.read_text())
        docs = [b["bundle"] for b in doc["bundles"]] if doc["schema"] == "crossdev.bundle_set" else [doc]
        return {c["id"]: {k: v for k, v in c.items() if k != "duration_s"} for d in docs for c in d["cases"]}

    whole, shards = cases(tmp_path / "whole.json"), cases(tmp_path / "merged.json")
    ops = lambda path: {c["details"]["op"] for c in cases(path).values()}  # noqa: E731
    # crc32(name) % 2 + 1: sin, sinc, sinh go to shard 1, tan and tanh to shard 2
    assert ops(tmp_path / "s1.json") == {"sin", "sinc", "sinh"} and ops(tmp_path / "s2.json") == {"tan", "tanh"}
    assert shards == whole, "the same cases, verdicts, messages and details"
    assert {c["status"] for c in whole.values()} >= {"pass", "xpass", "skip"}
    # A shard judges no entry stale (it ran part of the ops): it lists those none of its cases matched.
    doc = {f: json.loads((tmp_path / f"{f}.json").read_text()) for f in ("whole", "s1", "s2")}
    entries = lambda d, key: [e["match"] for e in d.get(key, [])]  # noqa: E731
    assert entries(doc["whole"], "stale_expectations") == ["t.sh/cos/*"]
    assert entries(doc["s1"], "shard_unmatched_expectations") == ["t.sh/tan/*", "t.sh/cos/*"]
    assert entries(doc["s2"], "shard_unmatched_expectations") == ["t.sh/sinc/*", "t.sh/cos/*"]
    assert not any("stale_expectations" in doc[f] for f in ("s1", "s2"))

    one, folded = collect(merge([str(tmp_path / "whole.json")])), collect(merge([str(tmp_path / "merged.json")]))
    assert [c.title for c in folded.columns] == [c.title for c in one.columns], "one runner, not one per shard"
    assert folded.ops == one.ops and folded.by_op == one.by_op and folded.by_op_dtype == one.by_op_dtype
    assert {k: [c["id"] for c in v] for k, v in folded.failing.items()} == \
        {k: [c["id"] for c in v] for k, v in one.failing.items()}

    for name in ("whole", "merged"):
        proc = cli("report", tmp_path / f"{name}.json", "--out", tmp_path / f"report-{name}")
        assert proc.returncode == 0, proc.stderr
    assert "t.sh/cos/*" in _section(tmp_path / "report-whole"), "the unsharded run's stale table"
    assert _section(tmp_path / "report-merged") == _section(tmp_path / "report-whole"), \
        "the same heat map, scoreboard and stale table"
