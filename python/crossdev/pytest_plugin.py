"""crossdev.pytest_plugin: the conformance matrices as pytest items, and device-picker checks.

    PYTHONPATH=build/python python3 -m pytest -p crossdev.pytest_plugin matrices/ [--simulate S]
        [--device KIND]... [--crossdev-bundle PATH] [--crossdev-import MODULE]...
        [--crossdev-load-library PATH]... [--crossdev-picker MODULE:CALLABLE --crossdev-picker-preset NAME]

Every case of the C++ catalog is one item, with the case id `crossdev run` reports
(``ops.modulate/cuda/float32/odd_tail/fused``): collection asks the engine for its plan
(``crossdev.harness.Catalog.plan``: load_catalog() + Suite::plan()), and an item runs its row
through the engine's ``run_row`` — the function `crossdev run`'s workers call — once per row
per process, so a verdict cannot differ between the two paths. Expectations
(matrices/expectations/) are ``xfail(strict=True)`` / ``skip`` markers; a stale one is a
``CrossdevWarning``. Rows run in the pytest process, as ``crossdev run --no-isolate`` does;
with pytest-xdist (``-n N``) a crashing kernel takes down one worker, which xdist reports and
replaces, the way `crossdev run` isolates rows in its workers (docs/ARCHITECTURE.md).

A picker check (``--crossdev-picker``) adds one item per named host profile: torch's device
probes are patched to describe the host, the picker is called, and its answer must be the
preset's decision there (``crossdev.resolve``). Every patch is undone, even when the picker raises.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import os
import pathlib
import warnings

import pytest

MATRIX_SUFFIXES = (".yaml", ".yml")
MATRIX_FOLDER_NAME = "matrices"  # a folder of this name is collected; others only when named on the command line


class CrossdevWarning(pytest.PytestWarning):
    """A stale expectation, or an engine result the plan did not announce."""


class CaseFailure(Exception):
    """A case the engine reports as fail, error, crash or xpass; the message is the engine's."""


def _crossdev():
    import crossdev  # noqa: WPS433  (imports torch first, then the extension)
    return crossdev


# ---------------------------------------------------------------------------- options

def pytest_addoption(parser):
    group = parser.getgroup("crossdev", "crossdev conformance matrices (crossdev.pytest_plugin)")
    group.addoption("--device", action="append", default=[], metavar="KIND",
                    help="collect only the ops cases of these device kinds (repeatable; default: every kind)")
    group.addoption("--simulate", default=os.environ.get("CROSSDEV_SIMULATE", ""), metavar="SPEC",
                    help='simulate device kinds the host lacks, e.g. "cuda:2,mps" (default: $CROSSDEV_SIMULATE), '
                         "as `crossdev run --simulate`")
    group.addoption("--crossdev-bundle", default="", metavar="PATH",
                    help="write the versioned result bundle `crossdev run --out` writes")
    group.addoption("--crossdev-import", action="append", default=[], metavar="MODULE",
                    help="import MODULE before collection (e.g. one registering ops with torch.library.custom_op)")
    group.addoption("--crossdev-load-library", action="append", default=[], metavar="PATH",
                    help="load a C++ extension (TORCH_LIBRARY ops) before collection (repeatable)")
    group.addoption("--crossdev-xdist-rows", action="store_true",
                    help="with -n: send all cases of a row to one worker, so each row runs once (faster); a row "
                         "that crashes its worker is then not recovered by xdist (the run hangs): not for crashing kernels")
    group.addoption("--crossdev-picker", default="", metavar="MODULE:CALLABLE",
                    help="check this device picker against --crossdev-picker-preset on every simulated host")
    group.addoption("--crossdev-picker-preset", default="", metavar="PRESET",
                    help="the preset whose decision the picker must match (crossdev.presets())")


def _usage(option, given, expected):
    raise pytest.UsageError(f"{option}: {given}; expected {expected}")


def _load_picker(spec):
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        _usage("--crossdev-picker", f"'{spec}' is not MODULE:CALLABLE", "e.g. mymodule:get_device")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        _usage("--crossdev-picker", f"cannot import module '{module_name}' ({e})", "an importable module (sys.path)")
    picker = getattr(module, attr, None)
    if not callable(picker):
        choices = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                         and getattr(v, "__module__", None) == module.__name__)
        _usage("--crossdev-picker", f"module '{module_name}' has no callable '{attr}'",
               "one of its callables: " + (", ".join(choices) or "(none)"))
    return picker


def pytest_configure(config):
    config.addinivalue_line("markers", "crossdev_case: a case of the crossdev conformance catalog")
    crossdev = _crossdev()
    # The host first: the sim backend must be registered before anything starts the autograd
    # engine (runner/run_context.h), and a bad spec is a usage error.
    try:
        prepared = crossdev.harness.prepare(config.getoption("--simulate"))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    if crossdev.harness.sim_registered():
        crossdev.sim.register()  # the Python side: torch.sim, Tensor.is_sim
    kinds = crossdev.harness.device_kinds()
    devices = []
    for kind in config.getoption("--device"):
        try:
            devices.append(crossdev.parse_device(kind)["type"])
        except ValueError:
            _usage("--device", f"unknown device kind '{kind}'", "one of " + ", ".join(kinds))
    import torch  # noqa: WPS433
    for path in config.getoption("--crossdev-load-library"):
        try:
            torch.ops.load_library(path)
        except (OSError, RuntimeError) as e:
            _usage("--crossdev-load-library", f"cannot load '{path}' ({str(e).splitlines()[0]})",
                   "a shared library (.so) built against this LibTorch")
    for name in config.getoption("--crossdev-import"):
        try:
            importlib.import_module(name)
        except ImportError as e:
            _usage("--crossdev-import", f"cannot import module '{name}' ({e})", "an importable module (sys.path)")
    picker_spec, preset = config.getoption("--crossdev-picker"), config.getoption("--crossdev-picker-preset")
    presets = [p["name"] for p in crossdev.presets()]
    picker = None
    if picker_spec or preset:
        if preset not in presets:
            _usage("--crossdev-picker-preset", f"unknown preset '{preset}'" if preset else "missing",
                   "one of " + ", ".join(presets))
        if not picker_spec:
            _usage("--crossdev-picker", "missing (--crossdev-picker-preset was given)", "MODULE:CALLABLE")
        picker = _load_picker(picker_spec)
    config.stash[_STATE] = _State(config, prepared, devices, picker, picker_spec, preset)
    if config.getoption("--crossdev-xdist-rows") and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_RowsStayTogether(), "crossdev-xdist-rows")
    _CONFIG["config"] = config  # hooks without a config argument (pytest_runtest_logreport) find it here


_CONFIG = {}


# ---------------------------------------------------------------------------- xdist

class _RowsStayTogether:
    """--crossdev-xdist-rows: pytest-xdist's `--dist load` spreads the cases of one ops row over
    several workers, and each runs the whole row (a row is the engine's unit: its cases share
    inputs and references). With this, under `load`, the cases of a row go to one worker
    (LoadScopeScheduling with the row as the scope). Measured: when a row crashes its worker,
    xdist's scope scheduling never finishes the run, so it is opt-in, for kernels that do not crash."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config, log):
        if config.getvalue("dist") != "load":
            return None
        from xdist.scheduler import LoadScopeScheduling  # noqa: WPS433

        class RowScheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid):
                path, sep, name = nodeid.partition("::")
                return path + sep + name.split("/", 1)[0] if sep else nodeid

        return RowScheduling(config, log)


# ---------------------------------------------------------------------------- state

class _State:
    """Per process: the catalogs, the row results, and (where the bundle is written) the records."""

    def __init__(self, config, prepared, devices, picker, picker_spec, preset):
        self.config = config
        self.simulate = prepared["simulate_spec"]
        self.note = prepared["note"]
        self.devices = devices
        self.picker, self.picker_spec, self.preset = picker, picker_spec, preset
        self.catalogs = {}   # path -> Catalog or the YamlError it raised
        self.rows = {}       # (catalog path, file index, row index) -> {case id: case}
        self.oplog_sent = set()
        self.records = []    # (order, case record, oplog records), for the bundle

    def catalog(self, path):
        if path not in self.catalogs:
            crossdev = _crossdev()
            try:
                catalog = crossdev.harness.Catalog(path, self.simulate)
                planned = catalog.plan()
            except ValueError as e:  # crossdev.harness.YamlError is a ValueError: "file:line: ..."
                self.catalogs[path] = e
            else:
                self.catalogs[path] = (catalog, planned)
                for message in catalog.stale_warnings():
                    warnings.warn(CrossdevWarning(message))
        return self.catalogs[path]

    def row_results(self, item):
        key = (item.catalog_path, item.case["file_index"], item.case["row_index"])
        if key not in self.rows:
            cases, oplog = item.catalog.run_row(item.case["file_index"], item.case["row_index"])
            planned = {c["id"] for c in item.parent.row_plan(item.case["row_index"])}
            unplanned = [c["id"] for c in cases if c["id"] not in planned]
            if unplanned:
                warnings.warn(CrossdevWarning(f"row {item.case['row_id']} returned cases its plan did not "
                                              f"announce: {', '.join(unplanned)}"))
            self.rows[key] = ({c["id"]: c for c in cases}, oplog)
        return self.rows[key]


_STATE = pytest.StashKey[_State]()


def _relative(path):
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _named_on_command_line(config, path):
    for arg in config.args:
        given = pathlib.Path(arg.split("::")[0])
        if not given.is_absolute():
            given = pathlib.Path(config.invocation_params.dir) / given
        if given.resolve() == path.resolve():
            return True
    return False


def pytest_collect_file(file_path, parent):
    if file_path.suffix not in MATRIX_SUFFIXES:
        return None
    config = parent.config
    folder = file_path.parent
    folder_is_catalog = folder.name == MATRIX_FOLDER_NAME or _named_on_command_line(config, folder)
    if not folder_is_catalog and not _named_on_command_line(config, file_path):
        return None
    # The catalog is the folder's (ids are unique across it), as `crossdev run --matrix FOLDER`.
    catalog_path = _relative(folder if folder_is_catalog else file_path)
    return MatrixFile.from_parent(parent, path=file_path, catalog_path=catalog_path)


class MatrixFile(pytest.File):
    def __init__(self, *, catalog_path, **kwargs):
        super().__init__(**kwargs)
        self.catalog_path = catalog_path

    def _cases(self):
        loaded = self.config.stash[_STATE].catalog(self.catalog_path)
        if isinstance(loaded, Exception):
            raise self.CollectError(f"crossdev: {loaded}")
        catalog, planned = loaded
        mine = [c for c in planned if pathlib.Path(c["file"]).resolve() == self.path.resolve()]
        return catalog, mine

    def collect(self):
        catalog, mine = self._cases()
        self._by_row = {}
        for case in mine:
            self._by_row.setdefault(case["row_index"], []).append(case)
        for case in mine:
            item = CaseItem.from_parent(self, name=case["id"], catalog=catalog, case=case)
            if case["expected"] == "xfail":
                item.add_marker(pytest.mark.xfail(strict=True, reason=f"{case['reason']} ({case['where']})"))
            elif case["expected"] == "skip":
                item.add_marker(pytest.mark.skip(reason=f"{case['reason']} ({case['where']})"))
            yield item

    def row_plan(self, row_index):
        return self._by_row.get(row_index, [])


class CaseItem(pytest.Item):
    def __init__(self, *, catalog, case, **kwargs):
        super().__init__(**kwargs)
        self.catalog, self.case = catalog, case
        self.catalog_path = self.parent.catalog_path
        self.result = None
        self.add_marker(pytest.mark.crossdev_case)

    def reportinfo(self):
        return self.path, self.case["line"] - 1, f"{self.case['suite']} row {self.case['row_id']}"

    def fetch_result(self):
        state = self.config.stash[_STATE]
        by_id, oplog = state.row_results(self)
        self.result = by_id.get(self.case["id"])
        key = (self.catalog_path, self.case["file_index"], self.case["row_index"])
        self.oplog = [] if key in state.oplog_sent else oplog
        state.oplog_sent.add(key)
        return self.result

    def runtest(self):
        r = self.fetch_result()
        if r is None:
            raise CaseFailure(f"the engine returned no case '{self.case['id']}' for row {self.case['row_id']}")
        status, message = r["status"], r["message"]
        expected_failure = self.get_closest_marker("xfail") is not None
        if status == "pass":
            return
        if status == "skip":
            pytest.skip(message)
        if status == "xfail":
            if expected_failure:
                raise CaseFailure(message)
            pytest.xfail(message)
        if status == "xpass" and expected_failure:
            return  # xfail(strict=True): pytest reports the unexpected pass as a failure
        raise CaseFailure(f"{status}: {message}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailure):
            lines = [f"{self.case['id']} ({self.case['file']}:{self.case['line']}): {excinfo.value}"]
            if self.result:
                lines.append(f"device: {self.result['device']} [{self.result['execution']}]")
                lines += [f"  {k}: {v}" for k, v in self.result["details"]]
            return "\n".join(lines)
        return super().repr_failure(excinfo, style)


# ---------------------------------------------------------------------------- device pickers

_PATCHED_PROBES = "torch.cuda.is_available, torch.cuda.device_count, torch.backends.mps.is_available, " \
                  "torch.xpu.is_available, torch.xpu.device_count, importlib.util.find_spec('torch_xla')"


@contextlib.contextmanager
def simulated_torch_probes(kinds):
    """Makes torch's device probes describe a host with `kinds` ({kind: count}); undoes every
    patch on exit, whatever the body raised."""
    import torch  # noqa: WPS433
    cuda, xpu = kinds.get("cuda", 0), kinds.get("xpu", 0)
    mps, xla = kinds.get("mps", 0) > 0, kinds.get("xla", 0) > 0
    real_find_spec = importlib.util.find_spec

    def find_spec(name, package=None):
        if name == "torch_xla" or name.startswith("torch_xla."):
            return importlib.machinery.ModuleSpec(name, None) if xla else None
        return real_find_spec(name, package)

    patches = [(torch.cuda, "is_available", lambda: cuda > 0), (torch.cuda, "device_count", lambda: cuda),
               (torch.backends.mps, "is_available", lambda: mps),
               (torch.xpu, "is_available", lambda: xpu > 0), (torch.xpu, "device_count", lambda: xpu),
               (importlib.util, "find_spec", find_spec)]
    saved = []
    try:
        for owner, name, value in patches:
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


class PickerChecks(pytest.Collector):
    def collect(self):
        state = self.config.stash[_STATE]
        for host in _crossdev().harness.named_hosts():
            yield PickerItem.from_parent(self, name=f"{state.preset}/{host}", host=host)


class PickerItem(pytest.Item):
    def __init__(self, *, host, **kwargs):
        super().__init__(**kwargs)
        self.host = host

    def reportinfo(self):
        return "crossdev-picker", None, self.nodeid

    def runtest(self):
        crossdev = _crossdev()
        state = self.config.stash[_STATE]
        profile = crossdev.host_profile(self.host, hypothetical=True)
        kinds = {kind: info["count"] for kind, info in profile["kinds"].items()}
        decision = crossdev.resolve([None], host=self.host, policy=state.preset)[0]
        with simulated_torch_probes(kinds):
            answer = state.picker()
        try:
            got = crossdev.parse_device(str(answer))
        except ValueError as e:
            raise CaseFailure(f"{state.picker_spec}() returned {answer!r}, not a device ({e})") from None
        same = got["type"] == decision["resolved_type"] and (
            got["index"] is None or got["index"] == decision["resolved_index"])
        if not same:
            host = ", ".join(f"{k} x{n}" for k, n in kinds.items())
            raise CaseFailure(f"on host '{self.host}' ({host}) preset {state.preset} picks {decision['resolved']} "
                              f"({decision['reason']}); {state.picker_spec}() returned {answer!r}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailure):
            return f"{excinfo.value}\n(patched while the picker ran: {_PATCHED_PROBES})"
        return super().repr_failure(excinfo, style)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    state = config.stash[_STATE]
    if state.picker is not None:
        checks = PickerChecks.from_parent(session, name="crossdev-picker", nodeid="crossdev-picker")
        items.extend(checks.collect())
    if state.devices:
        keep, drop = [], []
        for item in items:
            kind = item.case["device_kind"] if isinstance(item, CaseItem) else ""
            (drop if kind and kind not in state.devices else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


# ---------------------------------------------------------------------------- reports, bundle, JUnit

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # A case skipped by its expectation never reaches runtest(); the bundle still gets the
    # engine's own record of it.
    if isinstance(item, CaseItem) and item.get_closest_marker("skip") is not None:
        item.fetch_result()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if isinstance(item, CaseItem) and item.result is not None and (
            call.when == "call" or (call.when == "setup" and report.skipped)):
        r = item.result
        report.crossdev_record = r["record"]
        report.crossdev_oplog = list(item.oplog)
        report.crossdev_suite, report.crossdev_execution = r["suite"], r["execution"]
        report.crossdev_file = item.case["file"]
        report.crossdev_order = [item.case["file_index"], item.case["row_index"],
                                 [c["id"] for c in item.parent.row_plan(item.case["row_index"])].index(item.case["id"])]
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    record = getattr(report, "crossdev_record", None)
    if record is None:
        return
    config = _CONFIG.get("config")
    if config is None:
        return
    state = config.stash[_STATE]
    state.records.append((tuple(report.crossdev_order), report.crossdev_file, record, report.crossdev_oplog))
    # The JUnit classname is `crossdev run`'s: crossdev.<suite>.<real|simulated|not_run>.
    from _pytest.junitxml import xml_key  # noqa: WPS433
    xml = config.stash.get(xml_key, None)
    if xml is not None:
        xml.node_reporter(report).attrs["classname"] = f"crossdev.{report.crossdev_suite}.{report.crossdev_execution}"


def pytest_report_teststatus(report, config):
    if getattr(report, "crossdev_execution", None) == "simulated" and report.when == "call" and report.passed \
            and not hasattr(report, "wasxfail"):
        return "passed", ".", ("PASSED [simulated]", {"green": True})
    return None


def pytest_report_header(config):
    state = config.stash.get(_STATE, None)
    if state is None:
        return None
    return f"crossdev: simulate '{state.simulate or 'none'}'" + (f" ({state.note})" if state.note else "")


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    bundle = config.getoption("--crossdev-bundle")
    if not bundle or hasattr(config, "workerinput"):  # an xdist worker: the controller writes it
        return
    state = config.stash[_STATE]
    records = sorted(state.records, key=lambda r: r[0])
    matrices = sorted({r[1] for r in records})
    oplog = [entry for r in records for entry in r[3]]
    interrupted = "SIGINT" if exitstatus == pytest.ExitCode.INTERRUPTED else ""
    _crossdev().harness.write_outputs(bundle, "", state.simulate, matrices, [r[2] for r in records], oplog,
                                      interrupted)
