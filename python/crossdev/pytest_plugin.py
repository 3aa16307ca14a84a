"""crossdev.pytest_plugin: the conformance matrices as pytest items, and device-picker checks.

Installing crossdev registers this plugin (the ``pytest11`` entry point ``crossdev.pytest_plugin``); without the
package installed, load it with ``-p crossdev.pytest_plugin``.

    pytest matrices/ [--crossdev-simulate S] [--crossdev-device KIND]... [--crossdev-bundle PATH]
        [--crossdev-import MODULE|DIR/]... [--crossdev-load-library PATH]...
        [--crossdev-picker MODULE:CALLABLE --crossdev-picker-preset NAME]

Inert until used. In a session that asks nothing of it, the plugin only adds its options: it
imports neither torch nor crossdev's extension, registers no backend, reads no YAML file and
collects no item. It is used when the session asks for matrices (below), a picker check, or
gives one of its ``--crossdev-*`` options; only then are torch and the engine loaded.

Which YAML files are matrices (collected as items), and nothing else:
  - a YAML file (``.yaml``/``.yml``) named on the command line (``pytest path/to/ops.yaml``) is
    always one;
  - a folder named on the command line is a catalog when its own name is ``matrices``
    (``pytest matrices/``): the YAML files directly in it are collected (not its sub-folders,
    e.g. ``matrices/expectations/``), as ``crossdev run --matrix matrices/`` reads it;
  - the ``crossdev_matrices`` ini option lists more catalogs, folders or files, relative to the
    ini file's folder (the rootdir without one): ``crossdev_matrices = checks/device_rows``, or
    ``pytest -o crossdev_matrices=mine``. They are collected wherever pytest's collection reaches
    them (``pytest`` with no argument walks the rootdir).
A folder reached only by walking (``pytest checks/`` finding ``checks/data/config.yaml`` or even
``checks/matrices/``) is never a catalog, so a project's own YAML files are left alone.

Every case of the C++ catalog is one item, with the case id `crossdev run` reports
(``ops.modulate/cuda/float32/odd_tail/fused``): collection asks the engine for its plan
(``crossdev.harness.Catalog.plan``: load_catalog() + Suite::plan()), and an item runs its row
through the engine's ``run_row`` — the function `crossdev run`'s workers call — once per row
per process, so a verdict cannot differ between the two paths. Expectations
(matrices/expectations/) are ``xfail(strict=True)`` / ``skip`` markers; a stale one is a
``CrossdevWarning``. Rows run in the pytest process, as ``crossdev run --no-isolate`` does;
with pytest-xdist (``-n N``) a crashing kernel takes down one worker, which xdist reports and
replaces, the way `crossdev run` isolates rows in its workers (docs/ARCHITECTURE.md). An
exception a user's Python op raises inside a row is that case's ``error``, with the exception's
type and message.

The process is left as it was unless the session simulates: the ``sim`` backend (PrivateUse1) is
registered only when ``--crossdev-simulate`` (or ``$CROSSDEV_SIMULATE``, in a session that uses
the plugin) names a kind this host lacks, before anything can start autograd. Without it, the
cases of kinds the host lacks are skipped (not_run) with the reason, as in `crossdev run`.

A picker check (``--crossdev-picker``) adds one item per named host profile (crossdev.picker_check):
in a fresh process per host, torch's device probes (and a stand-in torch_xla) describe the host,
the picker is called, and its answer must be the preset's decision there (``crossdev.resolve``).
"""
from __future__ import annotations

import importlib
import os
import pathlib
import sys
import warnings

import pytest

from crossdev.picker_check import PickerChecks, load_picker as _load_picker

MATRIX_SUFFIXES = (".yaml", ".yml")
MATRIX_FOLDER_NAME = "matrices"  # a folder of this name, named on the command line, is a catalog
INI_MATRICES = "crossdev_matrices"


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
    group.addoption("--crossdev-device", action="append", default=[], metavar="KIND",
                    help="collect only the ops cases of these device kinds (repeatable; default: every kind)")
    group.addoption("--crossdev-simulate", default=None, metavar="SPEC",
                    help='simulate device kinds the host lacks, e.g. "cuda:2,mps", as `crossdev run --simulate` '
                         "(default: $CROSSDEV_SIMULATE; nothing is simulated, and no backend registered, without it)")
    group.addoption("--crossdev-bundle", default="", metavar="PATH",
                    help="write the versioned result bundle `crossdev run --out` writes")
    group.addoption("--crossdev-import", action="append", default=[], metavar="MODULE|DIR",
                    help="import MODULE before collection (e.g. one registering ops with torch.library.custom_op); "
                         "a value with a '/' is a directory put first on sys.path, this process's and the Python "
                         "worker's, where a models row's factory module:callable is found (repeatable)")
    group.addoption("--crossdev-load-library", action="append", default=[], metavar="PATH",
                    help="load a C++ extension (TORCH_LIBRARY ops) before collection (repeatable)")
    group.addoption("--crossdev-xdist-rows", action="store_true",
                    help="with -n: send all cases of a row to one worker, so each row runs once (faster); a row "
                         "that crashes its worker is then not recovered by xdist (the run hangs): not for crashing kernels")
    group.addoption("--crossdev-picker", default="", metavar="MODULE:CALLABLE",
                    help="check this device picker against --crossdev-picker-preset on every simulated host")
    group.addoption("--crossdev-picker-preset", default="", metavar="PRESET",
                    help="the preset whose decision the picker must match (crossdev.presets())")
    group.addoption("--crossdev-picker-timeout", type=float, default=120.0, metavar="SECONDS",
                    help="a picker that gives no answer on a host within this many seconds fails (default: 120)")
    parser.addini(INI_MATRICES, type="args", default=[],
                  help="crossdev matrix folders or files to collect, relative to the ini file's folder (the "
                       "rootdir without one); a folder named `matrices` or a YAML file named on the command "
                       "line is collected without it")


def simulate_option(config):
    """The simulate spec of this session: --crossdev-simulate, else $CROSSDEV_SIMULATE ("" when neither;
    also when the plugin is not loaded)."""
    given = config.getoption("--crossdev-simulate", default=None)
    return given if given is not None else os.environ.get("CROSSDEV_SIMULATE", "")


def _usage(option, given, expected):
    raise pytest.UsageError(f"{option}: {given}; expected {expected}")


class _Targets:
    """What the session asks the plugin to collect (module docstring): resolved paths, found
    without importing anything or reading a YAML file."""

    def __init__(self, config):
        self.files, self.folders, self.ini, self.args = set(), set(), [], []
        base = config.inipath.parent if config.inipath else config.rootpath
        for entry in config.getini(INI_MATRICES):
            path = (pathlib.Path(base) / entry).resolve()
            if path.is_dir():
                self.folders.add(path)
            elif path.is_file():
                self.files.add(path)
            else:
                raise pytest.UsageError(f"{INI_MATRICES}: '{entry}' ({path}) does not exist; expected a matrix "
                                        f"folder or YAML file, relative to {base}")
            self.ini.append(path)
        for arg in config.args:
            path = pathlib.Path(arg.split("::")[0])
            if not path.is_absolute():
                path = pathlib.Path(config.invocation_params.dir) / path
            try:
                path = path.resolve()
                is_file, is_dir = path.is_file(), path.is_dir()
            except OSError:
                continue
            self.args.append(path)
            if is_file and path.suffix in MATRIX_SUFFIXES:
                self.files.add(path)
            elif is_dir and path.name == MATRIX_FOLDER_NAME:
                self.folders.add(path)

    def asked(self):
        """A matrix named on the command line, or an ini catalog that collection reaches."""
        if any(a in self.files or a in self.folders for a in self.args):
            return True
        return any(a == path or a in path.parents for path in self.ini for a in self.args)

    def catalog_for(self, file_path):
        """The catalog path (folder or file) `file_path` is collected from; None when it is no matrix.
        The folder is the catalog where it is one (ids are unique across it, as `crossdev run
        --matrix FOLDER` checks)."""
        path = file_path.resolve()
        in_catalog = path.parent in self.folders
        if path in self.files:
            return file_path.parent if in_catalog or path.parent.name == MATRIX_FOLDER_NAME else file_path
        return file_path.parent if in_catalog else None


_OPTIONS = ("--crossdev-device", "--crossdev-simulate", "--crossdev-bundle", "--crossdev-import",
            "--crossdev-load-library", "--crossdev-xdist-rows", "--crossdev-picker", "--crossdev-picker-preset")


def _options_given(config):
    return any(config.getoption(name) not in (None, "", [], False) for name in _OPTIONS)


def pytest_configure(config):
    targets = _Targets(config)
    if not (targets.asked() or _options_given(config)):
        return  # not used by this session: nothing imported, registered or collected
    config.addinivalue_line("markers", "crossdev_case: a case of the crossdev conformance catalog")
    imports = config.getoption("--crossdev-import")  # directories first: before anything imports or plans
    _put_import_dirs_first([v for v in imports if _is_import_dir(v)], pathlib.Path(config.invocation_params.dir))
    crossdev = _crossdev()
    # The host first: when the session simulates, the sim backend must be registered before
    # anything starts the autograd engine (runner/run_context.h); when it does not, nothing is
    # registered. A bad spec is a usage error.
    try:
        prepared = crossdev.harness.prepare(simulate_option(config))
    except ValueError as e:
        raise pytest.UsageError(str(e).replace("--simulate:", "--crossdev-simulate:", 1)) from None
    if crossdev.harness.sim_registered():
        crossdev.sim.register()  # the Python side: torch.sim, Tensor.is_sim
    kinds = crossdev.harness.device_kinds()
    devices = []
    for kind in config.getoption("--crossdev-device"):
        try:
            devices.append(crossdev.parse_device(kind)["type"])
        except ValueError:
            _usage("--crossdev-device", f"unknown device kind '{kind}'", "one of " + ", ".join(kinds))
    # Loaded in a child process first (crossdev.libraries): a library whose static registration
    # throws (a taken TORCH_LIBRARY namespace) would abort this process; there it is a usage error.
    from crossdev import libraries  # noqa: WPS433
    try:
        loaded = libraries.load_checked(config.getoption("--crossdev-load-library"), simulate=prepared["simulate_spec"])
    except libraries.LoadLibraryError as e:
        raise pytest.UsageError(f"--crossdev-load-library: {e}") from None
    for name in (v for v in imports if not _is_import_dir(v)):
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
    config.stash[_STATE] = _State(config, targets, prepared, devices, picker, picker_spec, preset, loaded)
    if config.getoption("--crossdev-xdist-rows") and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_RowsStayTogether(), "crossdev-xdist-rows")
    _CONFIG["config"] = config  # hooks without a config argument (pytest_runtest_logreport) find it here


_CONFIG = {}


def _is_import_dir(value):
    """--crossdev-import's value is a directory when it has a path separator (`./models`, `/abs/dir`)
    or is `.`/`..`; otherwise a module name (`mylib.ops`)."""
    return "/" in value or os.sep in value or value in (".", "..")


def _put_import_dirs_first(values, base):
    """The directories first on sys.path and on PYTHONPATH, in the order given: the Python workers
    of Python suites (models rows' factories) inherit PYTHONPATH, as under `crossdev run --import`."""
    dirs = []
    for value in values:
        path = (base / value).resolve()
        if not path.is_dir():
            _usage("--crossdev-import", f"'{value}' is not a directory ({path})",
                   "a directory to put on sys.path (a value with '/') or an importable module")
        dirs.append(str(path))
    if not dirs:
        return
    sys.path[:0] = dirs
    old = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join(dirs + ([old] if old else []))


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

    def __init__(self, config, targets, prepared, devices, picker, picker_spec, preset, libraries):
        self.config = config
        self.libraries = libraries  # loaded here; a Python suite's worker process loads them too
        self.targets = targets
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
                catalog = crossdev.harness.Catalog(path, self.simulate, self.libraries)
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


def pytest_collect_file(file_path, parent):
    if file_path.suffix not in MATRIX_SUFFIXES:
        return None
    state = parent.config.stash.get(_STATE, None)
    if state is None:
        return None  # the plugin is not used by this session
    catalog_path = state.targets.catalog_for(file_path)
    if catalog_path is None:
        return None
    return MatrixFile.from_parent(parent, path=file_path, catalog_path=_relative(catalog_path))


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
                from crossdev.repro import HIDDEN_DETAILS, reproduce_line
                lines.append(f"device: {self.result['device']} [{self.result['execution']}]")
                details = self.result["details"]
                pairs = list(details.items() if isinstance(details, dict) else details)
                lines += [f"  {k}: {v}" for k, v in pairs if k not in HIDDEN_DETAILS]
                bundle = self.config.getoption("--crossdev-bundle") or ""
                line = reproduce_line(dict(self.result, details=dict(pairs), suite=self.case.get("suite")), bundle or None)
                if line.startswith("crossdev repro "):
                    line += "" if bundle else "   (BUNDLE: the file of --crossdev-bundle PATH; docs/repro.md)"
                    lines.append(f"reproduce: {line}")
                elif line:
                    lines.append(f"repro: {line}")
            return "\n".join(lines)
        return super().repr_failure(excinfo, style)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    state = config.stash.get(_STATE, None)
    if state is None:
        return
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
    state = config.stash.get(_STATE, None) if config is not None else None
    if state is None:
        return
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
    state = config.stash.get(_STATE, None)
    if not bundle or state is None or hasattr(config, "workerinput"):  # an xdist worker: the controller writes it
        return
    records = sorted(state.records, key=lambda r: r[0])
    matrices = sorted({r[1] for r in records})
    oplog = [entry for r in records for entry in r[3]]
    interrupted = "SIGINT" if exitstatus == pytest.ExitCode.INTERRUPTED else ""
    _crossdev().harness.write_outputs(bundle, "", state.simulate, matrices, [r[2] for r in records], oplog,
                                      interrupted)
