"""`crossdev run` under hostile conditions (issue 11): every failure to read, write or parse is
exit 2 naming the path and what was expected (never 3); special files, oversized files and
malformed embedded JSON are refused before the run; option values are checked strictly; an
empty selection is bad input; SIGINT/SIGTERM stop the workers, keep what ran and exit 130/143;
no worker outlives its parent; temporaries are unique and cleaned up; a full disk loses nothing.
"""
import ctypes
import json
import os
import pathlib
import resource
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CONTEXT = ROOT / "matrices/context.yaml"
ONE_ROW = ["--matrix", CONTEXT, "--filter", "ctx.autocast.cpu"]
HANG_ROW = "ctx.inference.mps"  # the 12th row of context.yaml: 11 rows finish before it


def hooks_library(exe):
    """The test-only hang hook (tests/test_hooks), loaded with --load-library: the production
    runner reads no CROSSDEV_TEST_* variable."""
    return str(pathlib.Path(exe).parent.parent / "lib" / "libcrossdev_test_hooks.so")


@pytest.fixture(scope="module")
def exe(build_dir):
    path = build_dir / "bin" / "crossdev"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build)")
    return str(path)


def run(exe, *args, timeout=120, env=None, limit_memory=False):
    full_env = dict(os.environ)
    full_env.update(env or {})

    def cap_memory():  # a reader without a size cap must fail here, not take the machine down
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))

    return subprocess.run([exe, "run", *map(str, args)], capture_output=True, text=True, env=full_env, cwd=ROOT,
                          timeout=timeout, preexec_fn=cap_memory if limit_memory else None)


def assert_bad_input(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    for needle in needles:
        assert str(needle) in proc.stderr, (needle, proc.stderr)
    assert "internal error" not in proc.stderr


# ---- exit codes: 2, never 3 ----

def test_start_row_that_is_not_a_number_exits_2(exe):
    assert_bad_input(run(exe, *ONE_ROW, "--start-row", "abc"), "--start-row", "'abc'")


def test_looping_symlink_in_the_matrix_folder_exits_2(exe, tmp_path):
    shutil.copy(CONTEXT, tmp_path / "context.yaml")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    assert_bad_input(run(exe, "--matrix", tmp_path), tmp_path / "loop.yaml", "symbolic links")


def test_looping_symlink_as_the_matrix_exits_2(exe, tmp_path):
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    assert_bad_input(run(exe, "--matrix", tmp_path / "loop.yaml"), tmp_path / "loop.yaml")


def drop_dac_capabilities():
    """preexec_fn: without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH even root obeys a folder's mode."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_unreadable_matrix_folder_exits_2(exe, tmp_path):
    folder = tmp_path / "matrices"
    folder.mkdir()
    shutil.copy(CONTEXT, folder / "context.yaml")
    folder.chmod(0o000)
    try:
        proc = subprocess.run([exe, "run", "--matrix", str(folder)], capture_output=True, text=True, cwd=ROOT,
                              timeout=120, preexec_fn=drop_dac_capabilities if os.geteuid() == 0 else None)
    finally:
        folder.chmod(0o755)
    assert_bad_input(proc, folder, "cannot read matrix folder", "Permission denied")


# ---- inputs: regular files only, size cap, strict options, embedded JSON, empty selection ----

def test_fifo_matrix_exits_2_without_blocking(exe, tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    start = time.monotonic()
    assert_bad_input(run(exe, "--matrix", fifo, timeout=60), fifo, "not a regular file (a FIFO)")
    assert time.monotonic() - start < 30


def test_fifo_in_a_matrix_folder_exits_2(exe, tmp_path):
    shutil.copy(CONTEXT, tmp_path / "context.yaml")
    os.mkfifo(tmp_path / "fifo.yaml")
    assert_bad_input(run(exe, "--matrix", tmp_path, timeout=60), tmp_path / "fifo.yaml", "not a regular file")


def test_dev_zero_matrix_exits_2_without_reading_it(exe):
    assert_bad_input(run(exe, "--matrix", "/dev/zero", timeout=60, limit_memory=True), "/dev/zero",
                     "not a regular file (a character device)")


def test_proc_file_matrix_exits_2(exe):
    assert_bad_input(run(exe, "--matrix", "/proc/self/status", timeout=60), "/proc/self/status", "pseudo-file")


def test_matrix_above_the_size_cap_exits_2_and_the_cap_can_be_raised(exe, tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:  # sparse: 64 MiB + 1 byte without writing them
        f.truncate((64 << 20) + 1)
    assert_bad_input(run(exe, "--matrix", big, timeout=60, limit_memory=True), big, "67108865 bytes",
                     "limit of 67108864 bytes", "--max-matrix-bytes")
    small = tmp_path / "context.yaml"
    shutil.copy(CONTEXT, small)
    size = small.stat().st_size
    assert_bad_input(run(exe, "--matrix", small, "--max-matrix-bytes", size - 1), f"limit of {size - 1} bytes")
    proc = run(exe, "--matrix", small, "--filter", "ctx.autocast.cpu", "--max-matrix-bytes", "1M")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e12", "86401", "5abc", "0", "-1", "", " 5", "0x10"])
def test_row_timeout_is_validated(exe, value):
    assert_bad_input(run(exe, *ONE_ROW, "--row-timeout", value), "--row-timeout", f"'{value}'", "86400")


@pytest.mark.parametrize("value", ["60", "600.5", "86400", "1e3"])
def test_valid_row_timeouts_are_accepted(exe, value):
    proc = run(exe, *ONE_ROW, "--row-timeout", value)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("option, text, needle", [
    ("--bench-json", '{"benchmarks": [', "truncated"),
    ("--bench-json", '{"benchmarks": 5}', '"benchmarks": expected an array'),
    ("--bench-json", '{"benchmarks": [{"real_time": 1}]}', 'missing "name"'),
    ("--bench-json", '{"benchmarks": [{"name": "a", "real_time": "fast"}]}', "real_time: expected a number"),
    ("--bench-json", '{"benchmarks": []} trailing', "unexpected text after"),
    ("--bench-json", "[" * 100000 + "]" * 100000, "nested deeper than"),
    ("--bench-json", "", "empty document"),
    ("--device-log", "[1, 2]", "expected an object"),
    ("--device-log", "{'single': 'quotes'}", "expected a string key"),
    ("--device-log", '{"a": 01}', "expected ',' or '}'"),
], ids=["truncated", "benchmarks-not-list", "no-name", "time-not-number", "trailing", "deep", "empty", "log-not-object",
        "single-quotes", "leading-zero"])
def test_malformed_embedded_json_exits_2_before_the_run(exe, tmp_path, option, text, needle):
    doc = tmp_path / "doc.json"
    doc.write_text(text)
    proc = run(exe, *ONE_ROW, option, doc, "--out", tmp_path / "b.json")
    assert_bad_input(proc, option, doc, "not valid JSON", needle)
    assert not (tmp_path / "b.json").exists()


def test_embedded_json_non_finite_numbers_become_null(exe, tmp_path):
    doc = tmp_path / "bench.json"
    doc.write_text('{"context": {}, "benchmarks": [{"name": "a", "real_time": NaN, "cpu_time": 1e999, '
                   '"x": -Infinity, "time_unit": "ns"}]}')
    out = tmp_path / "b.json"
    proc = run(exe, *ONE_ROW, "--bench-json", doc, "--out", out)
    assert proc.returncode == 0, proc.stderr

    def reject(name):
        raise AssertionError(f"non-JSON constant {name} in the bundle")
    bundle = json.loads(out.read_text(), parse_constant=reject)
    bench = bundle["benchmarks"]["benchmarks"][0]
    assert bench["real_time"] is None and bench["cpu_time"] is None and bench["x"] is None


def test_embedded_json_that_is_not_a_regular_file_exits_2(exe, tmp_path):
    fifo = tmp_path / "bench.json"
    os.mkfifo(fifo)
    assert_bad_input(run(exe, *ONE_ROW, "--bench-json", fifo, timeout=60), "--bench-json", fifo, "not a regular file")


def test_filter_matching_nothing_exits_2(exe, tmp_path):
    proc = run(exe, "--matrix", CONTEXT, "--filter", "no.such.row*", "--out", tmp_path / "b.json")
    assert_bad_input(proc, "nothing selected", "no.such.row*")
    assert not (tmp_path / "b.json").exists()


# ---- output paths: checked before the run; a failed write keeps the results ----

def test_output_path_that_is_a_folder_exits_2_before_the_run(exe, tmp_path):
    proc = run(exe, *ONE_ROW, "--out", tmp_path)
    assert_bad_input(proc, "--out", tmp_path, "is a folder")
    assert "passed" not in proc.stdout


def test_output_folder_that_cannot_be_created_exits_2(exe, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_bad_input(run(exe, *ONE_ROW, "--junit", blocker / "sub" / "j.xml"), "--junit", blocker / "sub" / "j.xml")


def in_small_tmpfs(script, size, tmp_path, env=None):
    """Runs a shell script with $D a fresh tmpfs of `size` (an unprivileged mount namespace)."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare")
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("user namespaces are not available")
    d = tmp_path / "fs"
    d.mkdir()
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["D"] = str(d)
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                           f'mount -t tmpfs -o size={size} tmpfs "$D" || exit 99\n{script}'],
                          capture_output=True, text=True, env=full_env, cwd=ROOT, timeout=300)


def test_full_disk_is_detected_before_the_run(exe, tmp_path):
    script = f"""
head -c 1M /dev/zero > "$D/fill" 2>/dev/null
"{exe}" run --matrix "{CONTEXT}" --out "$D/b.json" --quiet
rc=$?; ls -a "$D" >&2; exit $rc
"""
    proc = in_small_tmpfs(script, "256k", tmp_path)
    assert proc.returncode != 99, proc.stderr
    assert_bad_input(proc, "--out", "b.json", "bytes free")
    assert "passed" not in proc.stdout  # nothing ran


def test_disk_full_at_the_end_keeps_the_results_elsewhere(exe, tmp_path):
    marker = tmp_path / "hanging"
    elsewhere = tmp_path / "tmpdir"
    elsewhere.mkdir()
    script = f"""
"{exe}" run --matrix "{CONTEXT}" --out "$D/b.json" --junit "$D/j.xml" --quiet --row-timeout 3 \
  --load-library "{hooks_library(exe)}" &
pid=$!
while [ ! -e "{marker}" ]; do sleep 0.1; done
head -c 64M /dev/zero > "$D/fill" 2>/dev/null
wait $pid; rc=$?
rm -f "$D/fill"; ls -a "$D" > "{tmp_path}/listing"; exit $rc
"""
    env = {"CROSSDEV_TEST_HANG_ROW": HANG_ROW, "CROSSDEV_TEST_HANG_MARKER": str(marker), "TMPDIR": str(elsewhere)}
    proc = in_small_tmpfs(script, "4m", tmp_path, env)
    assert proc.returncode != 99, proc.stderr
    assert_bad_input(proc, "b.json", "No space left on device", str(elsewhere))
    saved = list(elsewhere.glob("crossdev-*-b.json"))
    assert len(saved) == 1, list(elsewhere.iterdir())
    bundle = json.loads(saved[0].read_text())
    assert len(bundle["cases"]) == 30 and bundle["summary"]["crash"] == 1
    junit = list(elsewhere.glob("crossdev-*-j.xml"))
    assert len(junit) == 1
    listing = (tmp_path / "listing").read_text().split()
    assert not [n for n in listing if ".tmp." in n], listing  # no temporary left on the full disk


# ---- signals: stop the workers, keep what ran, 130/143, no orphans ----

def children_of(pid):
    try:
        return [int(c) for c in pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def alive(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_hanging_run(exe, tmp_path, *extra):
    marker = tmp_path / "hanging"
    env = dict(os.environ, CROSSDEV_TEST_HANG_ROW=HANG_ROW, CROSSDEV_TEST_HANG_MARKER=str(marker))
    out, junit = tmp_path / "b.json", tmp_path / "j.xml"
    parent = subprocess.Popen([exe, "run", "--matrix", str(CONTEXT), "--out", str(out), "--junit", str(junit),
                               "--quiet", "--load-library", hooks_library(exe), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, env=env)
    deadline = time.monotonic() + 120
    try:
        while not marker.exists():
            assert parent.poll() is None, parent.communicate()
            assert time.monotonic() < deadline, "the hang hook never ran"
            time.sleep(0.05)
    except BaseException:
        reap_orphans(children_of(parent.pid))
        parent.kill()
        parent.wait()
        raise
    workers = children_of(parent.pid)
    return parent, workers, out, junit


def reap_orphans(pids):
    survivors = [p for p in pids if alive(p)]
    for p in survivors:
        os.kill(p, signal.SIGKILL)
    return survivors


def wait_gone(pids, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_the_worker_keeps_finished_rows_and_exits_128_plus_sig(exe, tmp_path, sig, code):
    parent, workers, out, junit = start_hanging_run(exe, tmp_path)
    try:
        assert workers, "the parent has a worker"
        parent.send_signal(sig)
        _, err = parent.communicate(timeout=60)
        assert parent.returncode == code, (parent.returncode, err)
        assert not wait_gone(workers), "the worker outlived the interrupted run"
    finally:
        parent.kill()
        survivors = reap_orphans(workers)
    assert not survivors
    bundle = json.loads(out.read_text())
    cases = bundle["cases"]
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)) == 30
    hang = ids.index(HANG_ROW)
    assert hang == 11
    assert all(c["status"] == "pass" for c in cases[:hang]), cases[:hang]
    for c in cases[hang:]:
        assert c["execution"] == "not_run" and c["status"] == "skip", c
        assert "interrupted" in c["message"] and c["details"]["not_run_reason"] == "interrupted"
    assert bundle["interrupted"] == signal.Signals(sig).name
    run_ids = {p.get("value") for p in ET.parse(junit).getroot().iter("property") if p.get("name") == "run_id"}
    assert run_ids == {bundle["run_id"]}


def test_sigkill_of_the_parent_leaves_no_orphan_worker(exe, tmp_path):
    parent, workers, _, _ = start_hanging_run(exe, tmp_path)
    try:
        assert workers
        parent.kill()
        parent.wait(timeout=30)
        survivors = wait_gone(workers)
    finally:
        reap_orphans(workers)
    assert not survivors, "a worker outlived its SIGKILLed parent"


def test_in_process_run_stops_between_rows_on_sigterm(exe, tmp_path):
    parent, _, out, _ = start_hanging_run(exe, tmp_path, "--no-isolate")
    try:
        parent.send_signal(signal.SIGTERM)  # the row hangs in this process: a second signal is fatal
        time.sleep(0.5)
        parent.send_signal(signal.SIGTERM)
        parent.wait(timeout=60)
    finally:
        parent.kill()
    assert parent.returncode == -signal.SIGTERM  # SA_RESETHAND: the second signal kills


# ---- temporaries and file sets ----

def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_stale_temporaries_are_removed_and_live_ones_kept(exe, tmp_path):
    out = tmp_path / "b.json"
    stale = [tmp_path / f"b.json.tmp.{dead_pid()}", tmp_path / f"b.json.tmp.{dead_pid()}.Ab12Cd"]
    live = tmp_path / f"b.json.tmp.{os.getpid()}.XyZ123"  # a concurrent writer that is still alive
    other = tmp_path / "unrelated.tmp.1"
    for f in (*stale, live, other):
        f.write_text("partial")
    proc = run(exe, *ONE_ROW, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert not any(f.exists() for f in stale)
    assert live.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["b.json", live.name, other.name])


def test_bundle_and_junit_carry_one_run_id(exe, tmp_path):
    ids = []
    for _ in range(2):
        out, junit = tmp_path / "b.json", tmp_path / "j.xml"
        assert run(exe, *ONE_ROW, "--out", out, "--junit", junit).returncode == 0
        run_id = json.loads(out.read_text())["run_id"]
        props = [p.get("value") for p in ET.parse(junit).getroot().iter("property") if p.get("name") == "run_id"]
        assert props and set(props) == {run_id}
        ids.append(run_id)
    assert ids[0] != ids[1]
    assert not list(tmp_path.glob("*.tmp.*"))
