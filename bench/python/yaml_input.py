"""Reading the bench's YAML inputs (matrices/bench/bench.yaml, peers.yaml) from Python under the rules
crossdev_yaml (impl/yaml) applies in C++: every problem is an InputError (exit 2) that names the file
and, where the parser knows it, the line; a key repeated in a mapping is refused (PyYAML, like
yaml-cpp, would silently keep the last one)."""
import pathlib
import sys

try:
    import yaml
except ModuleNotFoundError as e:  # a missing install step, not a benchmark result: exit 2 naming the extra
    print(f"the benchmark drivers need the package '{e.name}' (pip install 'crossdev[bench]', or pip install "
          f"PyYAML; make report installs it through ci/setup.sh)", file=sys.stderr)
    sys.exit(2)


class InputError(Exception):
    """Bad input (exit 2); the message names the file and, where known, the line or the row."""


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key, mark):
        super().__init__(f"duplicate key '{key}'")
        self.problem_mark = mark


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _DuplicateKey(key, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load(path):
    """The document in `path`. Raises InputError "path[:line]: ..."."""
    try:
        return yaml.load(pathlib.Path(path).read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}); expected a YAML file") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        what = str(exc) if isinstance(exc, _DuplicateKey) else f"YAML syntax error: {exc}"
        raise InputError(f"{path}{line}: {what}") from None
