"""Create the venv `make install` puts crossdev in: one that sees the packages of the Python creating it.

`python -m venv --system-site-packages` links a venv to the *base* interpreter's site-packages. When
the creating Python is itself a venv (a user's torch usually lives in one), the new venv would not
see that torch, and `pip install --no-build-isolation` would stop with "no torch". So, in that case,
a .pth file in the new venv lists the creating venv's site-packages after its own: the new venv sees
the same torch, the installed crossdev shadows nothing, and the creating venv is never written to.

    python ci/make_venv.py DIR [--without-pip]
Exit codes: 0 created (or already there), 2 bad arguments or DIR cannot be created.
"""
import argparse
import pathlib
import site
import sys
import sysconfig
import venv

PTH_NAME = "_crossdev_creator_site.pth"


def creator_site_dirs():
    """The site-packages of the running Python when it is a venv (sys.prefix differs from the base), else []."""
    if sys.prefix == getattr(sys, "base_prefix", sys.prefix):
        return []
    dirs = []
    for key in ("purelib", "platlib"):
        path = sysconfig.get_paths()[key]
        if path not in dirs:
            dirs.append(path)
    return dirs + [d for d in site.getsitepackages() if d not in dirs]


def new_site_packages(env_dir):
    """The site-packages folder of the venv at env_dir (lib/pythonX.Y/site-packages on POSIX)."""
    found = sorted(pathlib.Path(env_dir).glob("lib/python*/site-packages")) or \
        sorted(pathlib.Path(env_dir).glob("Lib/site-packages"))
    if not found:
        raise OSError(f"{env_dir}: the new venv has no site-packages folder")
    return found[0]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--without-pip", action="store_true")
    args = p.parse_args(argv)
    env_dir = pathlib.Path(args.dir)
    try:
        if not (env_dir / "bin" / "python").exists():
            venv.EnvBuilder(system_site_packages=True, with_pip=not args.without_pip).create(env_dir)
        dirs = creator_site_dirs()
        if dirs:
            (new_site_packages(env_dir) / PTH_NAME).write_text("".join(d + "\n" for d in dirs))
    except OSError as e:
        print(f"make_venv: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
