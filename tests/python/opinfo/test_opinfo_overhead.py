"""What keeps the opinfo sweep's harness overhead down (docs/opinfo.md, "What the harness costs"), each
checked for keeping the meaning it replaces. Fast: in-process, no op_db import.

  - the engine's check reads op_db's names from a cache that every op_db-importing worker writes
    (crossdev.opinfo.op_names), keyed by the torch install;
  - torch.manual_seed without the lazy seeding of runtimes that cannot start (crossdev.opinfo.seeding;
    its op_db sample seed without the stack walk: test_opinfo_worker.py, which imports op_db anyway);
  - a case's kernel label recorded once per op, dtype, check and form (crossdev.opinfo.kernel_source)."""
import json
import sys
import traceback
import types

import torch

from crossdev import worker
from crossdev.opinfo import kernel_source, op_names, seeding, selection, suite


def test_the_names_cache_round_trips_and_another_torch_install_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSDEV_CACHE_DIR", str(tmp_path))
    assert op_names.cached() is None, "no cache yet"
    op_names.store(["add", "sin.special"])
    assert op_names.cached() == ["add", "sin.special"]
    doc = json.loads((tmp_path / op_names.FILE).read_text())
    doc["key"] = doc["key"].replace(sys.version, "another python")
    (tmp_path / op_names.FILE).write_text(json.dumps(doc))
    assert op_names.cached() is None, "a key of another install is a miss"
    monkeypatch.setenv("OPINFO_RESTRICT_TO_DSL", "triton")  # op_db reads it: it is part of the key
    op_names.store(["add"])
    monkeypatch.delenv("OPINFO_RESTRICT_TO_DSL")
    assert op_names.cached() is None


def test_a_package_op_db_imported_that_is_gone_now_is_a_miss(tmp_path, monkeypatch):
    """The names were stored while expecttest (say) was importable; uninstalled since, the cache must
    not answer, so the check imports op_db and exits 2 naming the missing package, as without a cache."""
    monkeypatch.setenv("CROSSDEV_CACHE_DIR", str(tmp_path))
    # A module without a spec (as Cython's `cython_runtime`, which scipy loads) is not a package to look for.
    monkeypatch.setitem(sys.modules, "crossdev_specless_module", types.ModuleType("crossdev_specless_module"))
    op_names.store(["add"])
    doc = json.loads((tmp_path / op_names.FILE).read_text())
    assert "numpy" in doc["packages"], "torch imports numpy in this process: it is recorded"
    assert op_names.cached() == ["add"], "what was findable when stored is findable now: a hit"
    doc["packages"].append("crossdev_no_such_package_xyz")
    (tmp_path / op_names.FILE).write_text(json.dumps(doc))
    assert op_names.cached() is None


def test_an_unwritable_cache_is_left_alone(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("CROSSDEV_CACHE_DIR", str(tmp_path / "file" / "below"))
    op_names.store(["add"])  # no error
    assert op_names.cached() is None


def test_the_check_judges_globs_from_the_cached_names_without_importing_op_db(tmp_path, monkeypatch):
    """A cache naming one made-up OpInfo: the check accepts it and refuses torch's real `add`, so it read
    the cache; and it never asked for op_db."""
    monkeypatch.setenv("CROSSDEV_CACHE_DIR", str(tmp_path))
    op_names.store(["made_up_op"])

    def no_op_db():
        raise AssertionError("the check imported op_db although the names were cached")
    monkeypatch.setattr(selection, "load_op_db", no_op_db)

    class Out(worker.Protocol):
        def __init__(self):
            super().__init__(None)
            self.lines = []

        def send(self, event, **fields):
            self.lines.append({"event": event, **fields})
    out = Out()
    suite.check({"rows": [{"id": "a", "opinfo": "made_up_op"}, {"id": "b", "opinfo": "add"}]}, out)
    assert len(out.lines) == 1 and out.lines[0]["event"] == "bad", out.lines
    assert (out.lines[0]["row"], out.lines[0]["key"]) == (1, "opinfo"), out.lines
    assert out.lines[0]["message"].startswith("no OpInfo named 'add'") and "(1 OpInfos)" in out.lines[0]["message"], out.lines


def test_manual_seed_without_lazy_seeding_leaves_the_generators_as_torch_does(monkeypatch):
    monkeypatch.setattr(torch, "manual_seed", torch.manual_seed)  # restored after the test
    torch.manual_seed(7)
    expected = torch.rand(4)
    if not seeding.skip_lazy_seeding():
        return  # a runtime that can start: torch's own is kept (nothing else to check here)

    def no_stacks(*args, **kwargs):
        raise AssertionError("a lazy seed was queued (torch.cuda._lazy_call formats the stack)")
    monkeypatch.setattr(traceback, "format_stack", no_stacks)
    assert torch.manual_seed(7) is torch.default_generator
    assert torch.equal(torch.rand(4), expected)


def test_a_kernel_label_is_recorded_once_per_op_dtype_check_and_form(monkeypatch):
    calls = []
    monkeypatch.setattr(kernel_source, "_LABELS", {})
    monkeypatch.setattr(kernel_source, "_record", lambda op, sample, device, check, form:
                        calls.append((check, form)) or {"kernel_source": f"label {len(calls)}"})

    class Op:
        name, variant_test_name = "tanh", ""
    first = kernel_source.for_case(Op, None, "sim:0", "forward", "function", "float32")
    assert kernel_source.for_case(Op, None, "sim:1", "forward", "function", "float32") == first, "another kind: reused"
    assert kernel_source.for_case(Op, None, "sim:0", "forward", "out", "float32") == first, "out= is the function's"
    assert kernel_source.for_case(Op, None, "sim:0", "forward", "function", "float64") != first
    assert kernel_source.for_case(Op, None, "sim:0", "backward", "function", "float32") != first
    assert kernel_source.for_case(Op, None, "sim:0", "forward", "inplace", "float32") != first
    assert len(calls) == 4

