"""crossdev.picker_check: a device picker judged against a preset on every named host profile.

    pytest --crossdev-picker MODULE:CALLABLE --crossdev-picker-preset PRESET [--crossdev-picker-timeout S]
    python -m crossdev.picker_check --host-json '{"cuda": 2, "mps": 1}' --picker MODULE:CALLABLE

The pytest plugin adds one item per host of ``crossdev.harness.named_hosts()``
(``crossdev-picker::<preset>/<host>``). Each host's picker runs in a fresh Python process, this
module run as a script: real pickers cache what they find (accelerate's ``PartialState`` is a
process-wide singleton, and accelerate and Lightning keep their availability checks in
``functools.lru_cache``), so in one process the first host's answer would stick. The child

1. makes the host (``simulated_torch_probes``): torch's device probes answer for it, and on a host
   with XLA an importable stand-in ``torch_xla``, with package metadata, answers the calls that
   pickers make (``core.xla_model.xla_device``, ``runtime.device_type``,
   ``_internal.tpu.num_available_devices``, ...); on a host without XLA, a real ``torch_xla``
   is hidden, both from ``import`` and from ``importlib.metadata``;
2. imports the picker's module (after the host is made: module-level checks see it too), calls the
   picker with no arguments and prints one `answer` event (crossdev.child_process): the answer, or the
   exception the picker raised (type and message), and which simulated probes the picker asked.

The plugin compares the answer with the preset's decision there (``crossdev.resolve``). A picker
that raises fails with its exception's type and message; one that does not answer within
``--crossdev-picker-timeout`` seconds is killed and fails. Importing this module imports neither
torch nor crossdev's extension.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures
import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import platform
import shutil
import site
import sys
import tempfile
import traceback

import pytest

from crossdev import child_process

DEFAULT_TIMEOUT_S = 120.0
SYS_PATH_ENV = "CROSSDEV_PICKER_SYS_PATH"  # the parent's sys.path (JSON), so the child imports what it would

PATCHED_PROBES = ("torch.cuda.is_available/device_count, torch.xpu.is_available/device_count, "
                  "torch.backends.mps.is_available/is_built, torch.mps.device_count, platform.processor() "
                  "('arm' with MPS, else 'x86_64'), importlib.util.find_spec('torch_xla'), "
                  "importlib.metadata for torch_xla, and `import torch_xla` (a stand-in with XLA, absent without)")

_XLA_DEVICE_TYPE = "TPU"  # what torch_xla.runtime.device_type() answers on a host with XLA


class PickerFailure(Exception):
    """The picker's answer is not the preset's, or it raised, hung or died; the message says which."""


# ---------------------------------------------------------------------------- the stand-in torch_xla

_STANDIN_NOTE = "crossdev's stand-in torch_xla (a simulated XLA host in a picker check)"

_STANDIN_FILES = {
    "torch_xla/_standin.py": '''\
"""{note}: the simulated host, and what the picker asked."""
VERSION = {version!r}
DEVICE_TYPE = {device_type!r}
COUNT = {count!r}
ASKED = []


def ask(name):
    if name not in ASKED:
        ASKED.append(name)


def missing(module, name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"{{module}}.{{name}} is not simulated: {note} answers device discovery only "
                         "(xla_device, runtime.device_type, _internal.tpu.num_available_devices, ...)")
''',
    "torch_xla/__init__.py": '''\
"""{note}."""
import torch as _torch

from torch_xla import _standin

_standin.ask("import torch_xla")
__version__ = _standin.VERSION


def device(index=None):
    _standin.ask("torch_xla.device")
    return _torch.device("xla", 0 if index is None else int(index))


def devices():
    _standin.ask("torch_xla.devices")
    return [_torch.device("xla", i) for i in range(_standin.COUNT)]


def device_count():
    _standin.ask("torch_xla.device_count")
    return _standin.COUNT


def sync(*args, **kwargs):
    return None


def __getattr__(name):
    _standin.missing("torch_xla", name)
''',
    "torch_xla/version.py": '''\
from torch_xla._standin import VERSION as __version__
''',
    "torch_xla/core/__init__.py": "",
    "torch_xla/core/xla_model.py": '''\
"""{note}: device discovery, single process."""
import sys

import torch as _torch

from torch_xla import _standin


def xla_device(n=None, devkind=None):
    _standin.ask("torch_xla.core.xla_model.xla_device")
    return _torch.device("xla", 0 if n is None else int(n))


def get_xla_supported_devices(devkind=None, max_devices=None):
    _standin.ask("torch_xla.core.xla_model.get_xla_supported_devices")
    found = [f"xla:{{i}}" for i in range(_standin.COUNT)]
    return found if max_devices is None else found[:max_devices]


def xla_device_hw(device):
    _standin.ask("torch_xla.core.xla_model.xla_device_hw")
    return _standin.DEVICE_TYPE


def xla_real_devices(devices=None):
    return [f"{{_standin.DEVICE_TYPE}}:{{i}}" for i in range(_standin.COUNT)]


def xrt_world_size(defval=1):
    return 1


def get_ordinal(defval=0):
    return 0


def get_local_ordinal(defval=0):
    return 0


def is_master_ordinal(local=True):
    return True


def set_replication(device, devices):
    return None


def mark_step(*args, **kwargs):
    return None


def wait_device_ops(devices=()):
    return None


def rendezvous(tag, payload=b"", replicas=()):
    return [payload]


def master_print(*args, fd=sys.stdout, finfo=False):
    print(*args, file=fd)


def __getattr__(name):
    _standin.missing("torch_xla.core.xla_model", name)
''',
    "torch_xla/core/functions.py": '''\
from torch_xla import _standin


def __getattr__(name):
    _standin.missing("torch_xla.core.functions", name)
''',
    "torch_xla/runtime.py": '''\
"""{note}: the PJRT runtime of one process."""
from torch_xla import _standin


def device_type():
    _standin.ask("torch_xla.runtime.device_type")
    return _standin.DEVICE_TYPE


def using_pjrt():
    _standin.ask("torch_xla.runtime.using_pjrt")
    return True


def world_size():
    return 1


def global_ordinal():
    return 0


def local_ordinal():
    return 0


def process_index():
    return 0


def process_count():
    return 1


def local_process_count():
    return 1


def local_device_count():
    _standin.ask("torch_xla.runtime.local_device_count")
    return _standin.COUNT


def addressable_device_count():
    _standin.ask("torch_xla.runtime.addressable_device_count")
    return _standin.COUNT


def global_device_count():
    _standin.ask("torch_xla.runtime.global_device_count")
    return _standin.COUNT


def global_runtime_device_count():
    _standin.ask("torch_xla.runtime.global_runtime_device_count")
    return _standin.COUNT


def addressable_runtime_device_count():
    return _standin.COUNT


def is_spmd():
    return False


def __getattr__(name):
    _standin.missing("torch_xla.runtime", name)
''',
    "torch_xla/_internal/__init__.py": "",
    "torch_xla/_internal/tpu.py": '''\
from torch_xla import _standin


def num_available_devices():
    _standin.ask("torch_xla._internal.tpu.num_available_devices")
    return _standin.COUNT if _standin.DEVICE_TYPE == "TPU" else 0


def num_available_chips():
    return num_available_devices()


def num_local_processes():
    return 1


def num_tpu_workers():
    return 1


def version():
    _standin.ask("torch_xla._internal.tpu.version")
    return 4


def __getattr__(name):
    _standin.missing("torch_xla._internal.tpu", name)
''',
    "torch_xla/experimental/__init__.py": "",
    "torch_xla/experimental/tpu.py": '''\
from torch_xla._internal.tpu import num_available_devices, num_local_processes, version  # noqa: F401
''',
    "torch_xla/experimental/pjrt.py": '''\
from torch_xla.runtime import device_type, global_ordinal, local_ordinal, using_pjrt, world_size  # noqa: F401
''',
    "torch_xla/distributed/__init__.py": "",
    "torch_xla/distributed/xla_multiprocessing.py": '''\
from torch_xla import _standin


def __getattr__(name):
    _standin.missing("torch_xla.distributed.xla_multiprocessing", name)
''',
    "torch_xla/distributed/parallel_loader.py": '''\
"""{note}: loaders that hand batches through unchanged."""


class ParallelLoader:
    def __init__(self, loader, devices, **kwargs):
        self._loader, self._devices = loader, devices

    def per_device_loader(self, device):
        return iter(self._loader)


class MpDeviceLoader:
    def __init__(self, loader, device, **kwargs):
        self._loader, self._device = loader, device

    def __iter__(self):
        return iter(self._loader)

    def __len__(self):
        return len(self._loader)
''',
    "torch_xla/amp/__init__.py": '''\
from torch_xla import _standin


def __getattr__(name):
    _standin.missing("torch_xla.amp", name)
''',
    "{dist_info}/METADATA": '''\
Metadata-Version: 2.1
Name: torch_xla
Version: {version}
Summary: {note}
''',
    "{dist_info}/top_level.txt": "torch_xla\n",
    "{dist_info}/INSTALLER": "crossdev\n",
}


def write_torch_xla_standin(folder, count, version, device_type=_XLA_DEVICE_TYPE):
    """Writes the stand-in torch_xla package, with its dist-info, into `folder` (put it on sys.path)."""
    folder = pathlib.Path(folder)
    fields = {"note": _STANDIN_NOTE, "version": version, "count": int(count), "device_type": device_type,
              "dist_info": f"torch_xla-{version}.dist-info"}
    for name, text in _STANDIN_FILES.items():
        path = folder / name.format(**fields)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(**fields) if text else "")
    return folder


def _is_torch_xla(name):
    return name == "torch_xla" or name.startswith("torch_xla.")


def _is_torch_xla_dist(name):
    return str(name).lower().replace("-", "_").replace(".", "_") == "torch_xla"


class _NoTorchXla:
    """A meta-path finder first in line: on a host without XLA, `import torch_xla` fails as it
    does where torch_xla is not installed, even where it is."""

    def __init__(self, asked):
        self.asked = asked

    def find_spec(self, name, path=None, target=None):
        if _is_torch_xla(name):
            _ask(self.asked, "import torch_xla")
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return None


def _ask(asked, name):
    if name not in asked:
        asked.append(name)


# ---------------------------------------------------------------------------- the simulated host

@contextlib.contextmanager
def simulated_torch_probes(kinds, asked=None):
    """Makes this process look like a host with `kinds` ({kind: count}) to a device picker; yields
    the list of simulated probes the code asked, in order. Every patch is undone on exit, whatever
    the body raised: probes, sys.path, sys.meta_path, and the torch_xla modules in sys.modules."""
    import torch  # noqa: WPS433

    asked = [] if asked is None else asked
    cuda, xpu = int(kinds.get("cuda", 0)), int(kinds.get("xpu", 0))
    mps, xla = int(kinds.get("mps", 0)) > 0, int(kinds.get("xla", 0))
    real_find_spec = importlib.util.find_spec
    real_from_name = vars(importlib.metadata.Distribution)["from_name"]

    def probe(name, value):
        def answer(*args, **kwargs):
            _ask(asked, name)
            return value
        answer.__name__ = name.rsplit(".", 1)[-1]
        answer.__qualname__ = f"simulated {name}"
        return answer

    def find_spec(name, package=None):
        if _is_torch_xla(name):
            _ask(asked, "importlib.util.find_spec('torch_xla')")
            if not xla:
                return None
        return real_find_spec(name, package)

    def from_name(cls, name):
        if _is_torch_xla_dist(name):
            _ask(asked, "importlib.metadata('torch_xla')")
            if not xla:
                raise importlib.metadata.PackageNotFoundError(name)
        return real_from_name.__func__(cls, name)

    patches = [(torch.cuda, "is_available", probe("torch.cuda.is_available", cuda > 0)),
               (torch.cuda, "device_count", probe("torch.cuda.device_count", cuda)),
               (torch.backends.mps, "is_available", probe("torch.backends.mps.is_available", mps)),
               (torch.backends.mps, "is_built", probe("torch.backends.mps.is_built", mps)),
               (torch.xpu, "is_available", probe("torch.xpu.is_available", xpu > 0)),
               (torch.xpu, "device_count", probe("torch.xpu.device_count", xpu)),
               (platform, "processor", probe("platform.processor", "arm" if mps else "x86_64")),
               (importlib.util, "find_spec", find_spec),
               (importlib.metadata.Distribution, "from_name", classmethod(from_name))]
    if hasattr(torch, "mps") and hasattr(torch.mps, "device_count"):
        patches.append((torch.mps, "device_count", probe("torch.mps.device_count", int(mps))))

    hidden = {n: sys.modules.pop(n) for n in list(sys.modules) if _is_torch_xla(n)}
    standin = blocker = None
    saved = []
    try:
        if xla:
            standin = tempfile.mkdtemp(prefix="crossdev-torch_xla-")
            write_torch_xla_standin(standin, xla, torch.__version__.split("+")[0])
            sys.path.insert(0, standin)
        else:
            blocker = _NoTorchXla(asked)
            sys.meta_path.insert(0, blocker)
        importlib.invalidate_caches()
        for owner, name, value in patches:
            saved.append((owner, name, vars(owner).get(name, getattr(owner, name))))
            setattr(owner, name, value)
        yield asked
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
        standin_module = sys.modules.get("torch_xla._standin")
        for name in getattr(standin_module, "ASKED", ()):
            _ask(asked, name)
        for name in [n for n in sys.modules if _is_torch_xla(n)]:
            del sys.modules[name]
        sys.modules.update(hidden)
        if blocker is not None:
            sys.meta_path.remove(blocker)
        if standin is not None:
            with contextlib.suppress(ValueError):
                sys.path.remove(standin)
            shutil.rmtree(standin, ignore_errors=True)
        importlib.invalidate_caches()


# ---------------------------------------------------------------------------- the child process

def _split_spec(spec):
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        return None
    return module_name, attr


def _type_name(exc):
    t = type(exc)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _where(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f"{f.filename}:{f.lineno} in {f.name}"


def _callables(module):
    return sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                  and getattr(v, "__module__", None) == module.__name__)


def run_picker(spec, kinds):
    """In this process: makes the host, imports the picker's module and calls the picker; returns
    the JSON-able result."""
    parts = _split_spec(spec)
    if parts is None:
        return {"ok": False, "usage": f"'{spec}' is not MODULE:CALLABLE", "expected": "e.g. mymodule:get_device"}
    module_name, attr = parts
    with simulated_torch_probes(kinds) as asked:
        stage = "import"
        try:
            module = importlib.import_module(module_name)
            picker = getattr(module, attr, None)
            if not callable(picker):
                choices = _callables(module)
                return {"ok": False, "usage": f"module '{module_name}' has no callable '{attr}'",
                        "expected": "one of its callables: " + (", ".join(choices) or "(none)"), "asked": asked}
            stage = "call"
            answer = picker()
            import torch  # noqa: WPS433
            return {"ok": True, "answer": str(answer), "repr": repr(answer),
                    "is_device": isinstance(answer, torch.device), "asked": asked}
        except BaseException as e:  # noqa: B902  (SystemExit and KeyboardInterrupt from a picker are its answer too)
            return {"ok": False, "stage": stage, "type": _type_name(e), "message": str(e), "where": _where(e),
                    "asked": asked}


def _host_kinds(text):
    try:
        kinds = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e})") from None
    if not isinstance(kinds, dict) or not all(
            isinstance(k, str) and isinstance(n, int) and not isinstance(n, bool) and n >= 0 for k, n in kinds.items()):
        raise ValueError('expected an object of device kind -> count, e.g. {"cuda": 2, "mps": 1}')
    return kinds


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m crossdev.picker_check",
        description="Run a device picker once on a simulated host (a fresh process per host) and print its "
                    "answer as one JSON line (an `answer` event). The pytest plugin's --crossdev-picker runs this per host.")
    parser.add_argument("--host-json", required=True, metavar="JSON",
                        help='the host: device kind -> count, e.g. {"cuda": 2, "mps": 1, "xla": 1}')
    parser.add_argument("--picker", required=True, metavar="MODULE:CALLABLE", help="the picker, called with no arguments")
    args = parser.parse_args(argv)
    child_process.die_with_parent()  # the pytest process that asked (crossdev.child_process)
    try:
        kinds = _host_kinds(args.host_json)
    except ValueError as e:
        parser.error(f"--host-json: {e}")
    parent_path = os.environ.get(SYS_PATH_ENV)
    if parent_path:
        sys.path[:] = [p for p in json.loads(parent_path) if isinstance(p, str)]
    # What the picker prints goes to stderr: stdout carries the one `answer` event.
    sys.stdout.flush()
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        result = run_picker(args.picker, kinds)
    except BaseException as e:  # noqa: B902  (the harness's own failure: still one answer)
        result = {"ok": False, "stage": "harness", "type": _type_name(e), "message": str(e), "where": _where(e)}
    sys.stdout.flush()
    with os.fdopen(answer_fd, "w") as out:
        out.write(child_process.event_line("answer", result=result) + "\n")
    return 0


# ---------------------------------------------------------------------------- the parent: pytest items

def _child_env():
    env = dict(os.environ)
    package_root = str(pathlib.Path(__file__).resolve().parent.parent)
    site_dirs = {str(pathlib.Path(p).resolve()) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    if package_root not in site_dirs:  # a build tree or a sys.path entry added at run time: the child must find us
        env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
    env[SYS_PATH_ENV] = json.dumps([p for p in sys.path if isinstance(p, str)])
    return env


def run_child(spec, kinds, timeout=DEFAULT_TIMEOUT_S):
    """Runs the picker on one simulated host in a fresh process; returns the child's JSON result,
    or {"ok": False, "stage": "timeout"|"crash", ...}."""
    cmd = [sys.executable, "-m", "crossdev.picker_check", "--host-json", json.dumps(kinds), "--picker", spec]
    done = child_process.run(cmd, timeout=timeout, env=_child_env())  # a timeout kills the picker's children too
    if done.timed_out:
        return {"ok": False, "stage": "timeout", "timeout": timeout, "stderr": done.stderr}
    answers = [e for e in child_process.read_events(done.stdout) if e["event"] == "answer"]
    if not answers or not isinstance(answers[-1].get("result"), dict):
        return {"ok": False, "stage": "crash", "returncode": done.returncode, "stderr": done.stderr}
    result = answers[-1]["result"]
    result["stderr"] = done.stderr
    return result


def _tail(text, lines=15):
    kept = (text or "").rstrip().splitlines()[-lines:]
    return "\n".join("  " + line for line in kept)


def _top_level_names(module_spec):
    """(every name the module's source binds at top level, its public functions and classes), read
    with ast, never run; None where that cannot be known (no source, a star import, __getattr__)."""
    origin = getattr(module_spec, "origin", None)
    if not origin or not origin.endswith(".py"):
        return None
    try:
        tree = ast.parse(pathlib.Path(origin).read_bytes(), filename=origin)
    except (OSError, SyntaxError, ValueError):
        return None
    names, public = set(), []

    def bind(target):
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.add(node.id)

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                if not node.name.startswith("_"):
                    public.append(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name == "*":
                        raise LookupError("star import")
                    names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                bind(node.target)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                bind(node.target)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        bind(item.optional_vars)
            for field in ("body", "orelse", "finalbody", "handlers"):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(getattr(node, field, []) or [])
    if any(isinstance(node, ast.Global) or (isinstance(node, ast.Name) and node.id in ("globals", "vars"))
           for node in ast.walk(tree)):
        return None  # names bound at run time
    try:
        visit(tree.body)
    except LookupError:
        return None
    if "__getattr__" in names:
        return None
    return names, sorted(public)


def load_picker(spec):
    """Checks --crossdev-picker without running the user's module (it runs only in the hosts'
    processes): the module must be found on sys.path and, where its source tells, define the
    name. A bad one is a pytest.UsageError. Returns the spec."""
    parts = _split_spec(spec)
    if parts is None:
        raise pytest.UsageError(f"--crossdev-picker: '{spec}' is not MODULE:CALLABLE; expected e.g. mymodule:get_device")
    module_name, attr = parts
    try:
        found = importlib.util.find_spec(module_name)
        missing = "" if found is not None else f"No module named '{module_name}'"
    except ModuleNotFoundError as e:  # a parent package is missing
        found, missing = None, str(e)
    except Exception:  # noqa: BLE001  (a parent package that fails to import: each host reports it)
        return spec
    if found is None:
        raise pytest.UsageError(f"--crossdev-picker: cannot import module '{module_name}' ({missing}); "
                                "expected an importable module (sys.path)")
    known = _top_level_names(found)
    if known is not None and attr not in known[0]:
        raise pytest.UsageError(f"--crossdev-picker: module '{module_name}' has no callable '{attr}'; expected one "
                                "of its callables: " + (", ".join(known[1]) or "(none)"))
    return spec


def _describe_unanswered(result):
    stage = result.get("stage")
    if stage == "timeout":
        return f"no answer within {result['timeout']:g} s; the process was killed"
    if stage == "crash":
        return f"the picker's process {child_process.describe_exit(result.get('returncode'))} before answering"
    return f"the check itself failed: {result.get('type')}: {result.get('message')}"


def _crossdev():
    import crossdev  # noqa: WPS433

    return crossdev


_RUNS = pytest.StashKey["_Runs"]()


class _Runs:
    """The hosts' child processes, run a few at a time (one per CPU) so that the items need not
    wait for each other; under pytest-xdist each worker runs only its own."""

    def __init__(self, config):
        self.timeout = float(config.getoption("--crossdev-picker-timeout", None) or DEFAULT_TIMEOUT_S)
        workers = 1 if hasattr(config, "workerinput") else max(1, os.cpu_count() or 1)
        self.prefetch = not hasattr(config, "workerinput")
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="crossdev-picker")
        self.futures = {}
        config.add_cleanup(self.close)

    def close(self):
        for future in self.futures.values():
            future.cancel()
        self.pool.shutdown(wait=True)

    def submit(self, item):
        if item.nodeid not in self.futures:
            self.futures[item.nodeid] = self.pool.submit(run_child, item.spec, item.kinds(), self.timeout)
        return self.futures[item.nodeid]

    @classmethod
    def of(cls, config):
        runs = config.stash.get(_RUNS, None)
        if runs is None:
            runs = config.stash[_RUNS] = cls(config)
        return runs


class PickerChecks(pytest.Collector):
    """One PickerItem per named host profile."""

    def collect(self):
        preset = self.config.getoption("--crossdev-picker-preset")
        for host in _crossdev().harness.named_hosts():
            yield PickerItem.from_parent(self, name=f"{preset}/{host}", host=host)


class PickerItem(pytest.Item):
    def __init__(self, *, host, **kwargs):
        super().__init__(**kwargs)
        self.host = host
        self.spec = self.config.getoption("--crossdev-picker")
        self.preset = self.config.getoption("--crossdev-picker-preset")
        self._kinds = None
        self.asked = None  # the simulated probes the picker asked; None when its process gave no answer

    def reportinfo(self):
        return "crossdev-picker", None, self.nodeid

    def kinds(self):
        if self._kinds is None:
            profile = _crossdev().host_profile(self.host, hypothetical=True)
            self._kinds = {kind: info["count"] for kind, info in profile["kinds"].items()}
        return self._kinds

    def _host_text(self):
        shown = ", ".join(f"{k} x{n}" for k, n in self.kinds().items())
        return f"host '{self.host}' ({shown})"

    def runtest(self):
        crossdev = _crossdev()
        runs = _Runs.of(self.config)
        if runs.prefetch:  # start the next hosts' processes while this one runs
            for item in self.session.items:
                if isinstance(item, PickerItem) and item.config is self.config:
                    runs.submit(item)
        result = runs.submit(self).result()
        self.asked = result.get("asked")
        decision = crossdev.resolve([None], host=self.host, policy=self.preset)[0]
        where = f"on {self._host_text()}"
        if not result.get("ok"):
            stage = result.get("stage")
            if stage in ("timeout", "crash", "harness"):
                message = f"{where} {self.spec}(): {_describe_unanswered(result)}"
                if stage != "harness" and result.get("stderr", "").strip():
                    message += "\nits stderr (last lines):\n" + _tail(result["stderr"])
                raise PickerFailure(message)
            if result.get("usage"):
                raise PickerFailure(f"{where}: --crossdev-picker {result['usage']}; expected {result['expected']}")
            what = f"importing {self.spec.partition(':')[0]}" if stage == "import" else f"{self.spec}()"
            at = f" (at {result['where']})" if result.get("where") else ""
            raise PickerFailure(f"{where} {what} raised {result['type']}: {result['message']}{at}")
        answer, shown = result["answer"], result["repr"]
        try:
            got = crossdev.parse_device(answer)
        except ValueError as e:
            raise PickerFailure(f"{where} {self.spec}() returned {shown}, not a device ({e})") from None
        same = got["type"] == decision["resolved_type"] and (
            got["index"] is None or got["index"] == decision["resolved_index"])
        if not same:
            raise PickerFailure(f"{where} preset {self.preset} picks {decision['resolved']} "
                                f"({decision['reason']}); {self.spec}() returned {shown}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, PickerFailure):
            asked = ("not known: its process gave no answer" if self.asked is None
                     else ", ".join(self.asked) or "none of them")
            return (f"{excinfo.value}\n(simulated in a fresh process for this host: {PATCHED_PROBES})"
                    f"\n(the picker asked: {asked})")
        return super().repr_failure(excinfo, style)


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # a picker's leftover non-daemon threads must not keep the process (and the check) waiting
