"""Atomic file writes: readers (CI uploaders, browsers) never see a half-written report."""
import os
import tempfile
from pathlib import Path


def write_text_atomically(path, text: str) -> None:
    """Writes `text` (UTF-8) to a temp file in the target folder, then renames it over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; reports are meant to be read and published
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
