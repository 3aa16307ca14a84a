"""`crossdev diff`: two bundles that differ only in timings, ids, versions, commits and places are
the same (0); a changed verdict, metric, label or case set is a difference, shown as a diff (1); a
bundle crossdev.report cannot load is bad input (2)."""
import copy
import json
import subprocess
import sys

import pytest

from crossdev.report import sample


def run(repo_root, *args):
    proc = subprocess.run([sys.executable, "-m", "crossdev", "diff", *map(str, args)], cwd=repo_root,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def base():
    cases = [sample.ops_case("modulate", "cpu", "float32", "fused"),
             sample.case("mgr.memory", "manager", metrics={"allocated_delta_mib": 64.0059, "steps": 3}),
             sample.case("mgr.ckpt", "manager", details={"file": "/ckout-a/matrices/x.yaml",
                                                         "path": "/tmp/crossdev_manager_ckpt_123_0.pt"})]
    return sample.bundle("cpu", cases)


def write(tmp_path, name, doc):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def rerun_of(doc):
    """What a second run of the same code changes."""
    doc = copy.deepcopy(doc)
    doc["created_utc"] = "2030-01-01T00:00:00Z"
    doc["run_id"] = "another-run"
    doc["execution_target"]["git_commit"] = "f" * 40
    doc["execution_target"]["libtorch_version"] = "2.99.0"
    for c in doc["cases"]:
        c["duration_s"] = 9.5
        if "allocated_delta_mib" in c["metrics"]:
            c["metrics"]["allocated_delta_mib"] = 64.0061
        if "path" in c["details"]:
            c["details"]["path"] = "/tmp/crossdev_manager_ckpt_98765_0.pt"
            c["details"]["file"] = "/ckout-b/matrices/x.yaml"
    doc["cases"].reverse()  # order is not content
    return doc


def test_a_rerun_is_the_same(tmp_path, repo_root):
    doc = base()
    rc, out, err = run(repo_root, write(tmp_path, "a", doc), write(tmp_path, "b", rerun_of(doc)),
                       "--root-a", "/ckout-a", "--root-b", "/ckout-b")
    assert rc == 0, out + err
    assert out.startswith("same: 3 cases")


@pytest.mark.parametrize("change", ["status", "metric", "label", "case"])
def test_a_changed_verdict_metric_label_or_case_set_is_a_difference(tmp_path, repo_root, change):
    doc = base()
    after = rerun_of(doc)
    target = next(c for c in after["cases"] if c["suite"] == "ops")
    if change == "status":
        target["status"], target["message"] = "fail", "values not close"
        after["summary"]["pass"] -= 1
        after["summary"]["fail"] += 1
    elif change == "metric":
        target["metrics"]["max_ulp"] = 3.0
    elif change == "label":
        target["details"]["impl"] = "fallback"
    else:
        after["cases"] = [c for c in after["cases"] if c is not target]
        after["summary"]["total"] -= 1
        after["summary"]["pass"] -= 1
        after["summary"]["real"] -= 1
    rc, out, err = run(repo_root, write(tmp_path, "a", doc), write(tmp_path, "b", after),
                       "--root-a", "/ckout-a", "--root-b", "/ckout-b")
    assert rc == 1, out + err
    assert "different: " in out and "modulate.row/cpu/float32/small/fused" in out, out


def test_without_the_roots_the_checkout_path_is_a_difference(tmp_path, repo_root):
    doc = base()
    rc, out, _ = run(repo_root, write(tmp_path, "a", doc), write(tmp_path, "b", rerun_of(doc)))
    assert rc == 1 and "/ckout-b/matrices/x.yaml" in out


def test_a_bundle_that_does_not_load_is_bad_input(tmp_path, repo_root):
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "crossdev.bundle", "cases": [')
    rc, _, err = run(repo_root, write(tmp_path, "a", base()), broken)
    assert rc == 2 and str(broken) in err
