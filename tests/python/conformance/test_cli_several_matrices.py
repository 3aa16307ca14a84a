"""`crossdev run --matrix A --matrix B`: one catalog of both, in one bundle; a file selected twice is
bad input (exit 2) naming it, never duplicate case ids."""
import json


def row_ids(bundle_path):
    return {case["row_id"] for case in json.loads(bundle_path.read_text())["cases"]}


def test_two_matrices_are_one_run(cli, repo_root, tmp_path):
    one, two, both = tmp_path / "one.json", tmp_path / "two.json", tmp_path / "both.json"
    for path, matrices in ((one, ["matrices/context.yaml"]), (two, ["matrices/redirect_points.yaml"]),
                           (both, ["matrices/context.yaml", "matrices/redirect_points.yaml"])):
        args = [a for m in matrices for a in ("--matrix", repo_root / m)]
        r = cli("run", *args, "--quiet", "--out", path)
        assert r.returncode == 0, r.stdout + r.stderr
    assert row_ids(one) and row_ids(two) and not row_ids(one) & row_ids(two)
    assert row_ids(both) == row_ids(one) | row_ids(two)


def test_a_file_selected_twice_is_exit_2_naming_it(cli, repo_root, tmp_path):
    r = cli("run", "--matrix", repo_root / "matrices", "--matrix", repo_root / "matrices" / "context.yaml",
            "--out", tmp_path / "b.json")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "context.yaml' is selected twice" in r.stderr, r.stderr
    assert not (tmp_path / "b.json").exists()
