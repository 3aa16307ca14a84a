"""An event the engine cannot read is never dropped (docs/python-worker.md; lit's UNRESOLVED): a Python worker that
sends an event a run does not know makes an `error` case naming it, in the isolation worker and in process alike,
and a check's `bad` event naming a row that was not sent ends the check naming it. The worker here is the real
one, started through CROSSDEV_PYTHON by a wrapper that adds the event (runner/python_worker.h)."""
import json
import os
import sys
import textwrap

import pytest

ROW = "- {id: t.view, source: s, intent: i, claim: inference_mode_view, devices: [cpu], expect: works}\n"


def wrapper(tmp_path, patch):
    """An interpreter for the engine's Python worker: crossdev.worker with `patch` applied to its Protocol."""
    script = tmp_path / "python_with_a_patched_worker"
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent("""\
        import os, sys
        from crossdev import worker
        """) + textwrap.dedent(patch) + textwrap.dedent("""\
        code = worker.main()
        sys.stdout.flush()
        os._exit(code)
        """))
    script.chmod(0o755)
    return {"CROSSDEV_PYTHON": str(script)}


@pytest.mark.parametrize("mode", [[], ["--no-isolate"]], ids=["isolated", "in-process"])
def test_an_unknown_event_in_a_run_is_an_error_case_naming_it(cli, tmp_path, mode):
    env = wrapper(tmp_path, """\
        plan = worker.Protocol.plan
        def plan_then_surprise(self, n):
            plan(self, n)
            self.send("surprise", detail="an event this engine does not know")
        worker.Protocol.plan = plan_then_surprise
        """)
    matrix = tmp_path / "claims_t.yaml"
    matrix.write_text("suite: claims\ncases:\n  " + ROW)
    bundle = tmp_path / "b.json"
    proc = cli("run", "--matrix", matrix, "--out", bundle, *mode, env=env)
    cases = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]} if bundle.exists() else {}
    assert proc.returncode == 1, proc.stdout + proc.stderr
    unknown = cases["t.view/(unknown event)"]
    assert (unknown["status"], unknown["execution"]) == ("error", "not_run"), unknown
    assert unknown["message"].startswith("unresolved: the worker sent an unknown event 'surprise'"), unknown
    assert unknown["details"]["malformed_event"] == "unknown event 'surprise'"
    assert unknown["row_id"] == "t.view" and unknown["suite"] == "claims"
    assert cases["t.view/cpu"]["status"] == "pass", "the row's own case is judged as ever"


def test_a_bad_event_naming_a_row_that_was_not_sent_ends_the_check_naming_it(cli, tmp_path):
    env = wrapper(tmp_path, """\
        bad = worker.Protocol.bad
        worker.Protocol.bad = lambda self, row, key, message: bad(self, row + 7, key, message)
        """)
    matrix = tmp_path / "claims_t.yaml"
    matrix.write_text("suite: claims\ncases:\n  " + ROW.replace("inference_mode_view", "no_such_claim"))
    proc = cli("run", "--matrix", matrix, "--out", tmp_path / "b.json", env=env)
    assert proc.returncode != 0 and proc.returncode != 1, proc.stdout + proc.stderr
    assert "the worker's bad event names row 7, not one of the 1 rows sent" in proc.stderr, proc.stderr
