"""crossdev's PEP 517 build backend: scikit-build-core, after one check of its own.

crossdev is a torch extension: it builds against the torch already installed, like flash-attn or
apex, with `pip install --no-build-isolation .`. Without a torch (or in pip's isolated build
environment, which has none), or with a torch older than crossdev supports, the build stops at
once with a message saying what to do, not with a CMake trace.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

OLDEST_TORCH = (2, 0)
_HINT = "crossdev builds against the torch in your environment: install torch (any 2.x) first, then run\n" \
        "    pip install --no-build-isolation <crossdev>"


class TorchRequirementError(SystemExit):
    pass


def _torch_version() -> tuple[str, Path]:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        where = f"the Python at {sys.executable}"
        isolated = "pip's isolated build environment (did you forget --no-build-isolation?)" \
            if "pip-build-env" in sys.executable or any("pip-build-env" in p for p in sys.path) else where
        raise TorchRequirementError(f"error: crossdev: no torch in {isolated}.\n{_HINT}")
    folder = Path(list(spec.submodule_search_locations)[0])
    text = (folder / "version.py").read_text(errors="replace") if (folder / "version.py").exists() else ""
    m = re.search(r"""__version__\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""", text)
    return (m.group(1) if m else "unknown"), folder


def check_torch() -> None:
    version, folder = _torch_version()
    m = re.match(r"(\d+)\.(\d+)", version)
    if not m or (int(m.group(1)), int(m.group(2))) < OLDEST_TORCH:
        oldest = ".".join(map(str, OLDEST_TORCH))
        raise TorchRequirementError(
            f"error: crossdev needs torch >= {oldest}; this environment has torch {version} ({folder}).\n{_HINT}")
    print(f"crossdev: building against torch {version} ({folder})", file=sys.stderr)


def _backend():
    # Imported after the torch check, so a machine without torch hears about torch first.
    from scikit_build_core import build

    return build


def get_requires_for_build_wheel(config_settings=None):
    check_torch()
    return _backend().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings=None):
    check_torch()
    return _backend().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    check_torch()
    return _backend().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    check_torch()
    return _backend().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    check_torch()
    return _backend().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    check_torch()
    return _backend().build_editable(wheel_directory, config_settings, metadata_directory)


def get_requires_for_build_sdist(config_settings=None):
    return _backend().get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory, config_settings=None):
    return _backend().build_sdist(sdist_directory, config_settings)
