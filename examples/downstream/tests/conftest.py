"""mylib's tests: the example root on sys.path (import mylib) and crossdev's Python module, which
a user would `pip install`; from a crossdev build tree, PYTHONPATH=<build>/python."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
