"""Element counts as the bench matrices write them: 4096, 256K, 8M (K = 1024, M = 1024^2)."""
import re

from yaml_input import InputError

_SIZE = re.compile(r"^([1-9][0-9]*)(K|M)?$")
_MULTIPLIER = {None: 1, "K": 1024, "M": 1024 * 1024}


def parse_size(text, where):
    """(elements, label as written). Raises InputError naming `where`."""
    match = _SIZE.match(str(text))
    if not match:
        raise InputError(f"{where}: size '{text}': expected a positive element count such as 4096, 256K or 8M")
    return int(match.group(1)) * _MULTIPLIER[match.group(2)], str(text)


def size_label(elements):
    """The shortest label parse_size reads back: 262144 -> 256K, 8388608 -> 8M, 1000 -> 1000."""
    for suffix in ("M", "K"):
        if elements % _MULTIPLIER[suffix] == 0:
            return f"{elements // _MULTIPLIER[suffix]}{suffix}"
    return str(elements)
