"""The Python half of the one way crossdev starts a child (crossdev.child_process, the twin of
conformance/runner/child_process.h; docs/ARCHITECTURE.md, "Add a child process"): CROSSDEV_PARENT_PID in the
child only, die_with_parent, a one-shot run whose timeout kills what the child started, and events."""
import os
import subprocess
import sys
import textwrap
import time

from crossdev import child_process


def python(code):
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_the_child_gets_the_parent_variable_and_this_process_keeps_its_environment():
    before = dict(os.environ)
    done = child_process.run(python("import os; print(os.environ['CROSSDEV_PARENT_PID'], os.environ['EXTRA'])"),
                             timeout=60, env=dict(os.environ, EXTRA="x"))
    assert done.returncode == 0 and not done.timed_out, done
    assert done.stdout.split() == [str(os.getpid()), "x"]
    assert dict(os.environ) == before, "nothing changes in the process that starts children"


def test_run_names_the_real_parent_whatever_the_base_environment_says():
    """An environment copied from a child of an engine holds that engine's pid: run() replaces it with ours, so
    the child's die_with_parent does not take us for a parent that is gone."""
    code = "from crossdev import child_process; child_process.die_with_parent(7); print('ran on')"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), CROSSDEV_PARENT_PID="1")
    done = child_process.run(python(code), timeout=60, env=env)
    assert (done.returncode, done.stdout) == (0, "ran on\n"), done


def test_die_with_parent_ends_a_child_started_for_another_process(tmp_path):
    """The variable set by hand (as an engine above would) to a pid that is not the child's parent."""
    script = tmp_path / "child.py"
    script.write_text("from crossdev import child_process\nchild_process.die_with_parent(7)\nprint('ran on')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), CROSSDEV_PARENT_PID="1")
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (7, ""), proc


def test_a_timeout_kills_the_child_and_what_it_started_keeping_its_output(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    code = f"""
        import subprocess, sys, time
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(grandchild.pid))
        print("started", flush=True)
        time.sleep(600)
    """
    started = time.monotonic()
    done = child_process.run(python(code), timeout=5)
    assert done.timed_out and done.returncode is None, done
    assert time.monotonic() - started < 60
    assert done.stdout == "started\n", "what it wrote before the timeout is kept"
    grandchild = int(pid_file.read_text())
    for _ in range(100):  # reaped by init once killed: gone within moments
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the grandchild {grandchild} outlived the timeout")


def test_events_are_json_objects_naming_their_event_and_nothing_else_is_one():
    line = child_process.event_line("case", id="r/c", metrics={"max_ulp": float("nan")})
    text = "\n".join(["a library printed this", line, "{not json", '{"no": "event"}', '["event"]',
                      child_process.event_line("done")])
    events = child_process.read_events(text)
    assert [e["event"] for e in events] == ["case", "done"]
    assert events[0]["id"] == "r/c" and events[0]["metrics"]["max_ulp"] != events[0]["metrics"]["max_ulp"], "NaN"


def test_how_a_child_ended_is_worded_as_the_engine_words_it():
    assert child_process.describe_exit(-11) == "was killed by signal 11 (SIGSEGV)"
    assert child_process.describe_exit(2) == "exited with status 2"
    assert child_process.describe_exit(None) == "ended", "not reaped: how is not known"


def test_an_event_stream_reads_a_long_lived_childs_events_one_at_a_time_skipping_other_lines():
    """The twin of conformance/runner/event_stream.h: two events written at once are two reads (nothing is
    left in a buffer that select() cannot see), a line that is no event is skipped, a last line without its
    newline is read, and the end of the child's output is None with `ended` set."""
    code = """
        import sys, time
        sys.stdout.write('{"event":"ready"}\\nprinted by a library\\n{"event":"done","index":0}\\n')
        sys.stdout.flush()
        sys.stdin.readline()
        sys.stdout.write('{"event":"done","index":1}')
    """
    proc = child_process.start(python(code), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    events = child_process.EventStream(proc.stdout)
    try:
        assert events.next(60) == {"event": "ready"}
        assert events.next(60) == {"event": "done", "index": 0}
        started = time.monotonic()
        assert events.next(0.5) is None and not events.ended, "nothing more until it is asked: a timeout"
        assert time.monotonic() - started >= 0.4
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert events.next(60) == {"event": "done", "index": 1}
        assert events.next(60) is None and events.ended and events.last_line == ""
    finally:
        assert child_process.stop(proc) == 0


def test_stop_kills_a_child_that_still_runs_and_says_how_it_ended():
    proc = child_process.start(python("import time; time.sleep(600)"), stdout=subprocess.PIPE)
    code = child_process.stop(proc)
    assert child_process.describe_exit(code) == "was killed by signal 9 (SIGKILL)"
    assert child_process.stop(proc) == code, "a child already stopped: its status again"
