"""How this process was started, as a person would type it again: the hints a command prints
(`make run`'s "a new key for it: ...") must work as printed, also when `payorch` is not on PATH."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def invoked_as() -> str:
    """`payorch` when that name on PATH is this program, else the path it was started by (made
    relative to the working directory when inside it, e.g. `.venv/bin/payorch`), or
    `python -m payorch` with this interpreter."""
    started = Path(sys.argv[0])
    if started.name == "__main__.py":
        return f"{_shown(Path(sys.executable))} -m payorch"
    on_path = shutil.which("payorch")
    if on_path is not None and Path(on_path).resolve() == started.resolve():
        return "payorch"
    return _shown(started)


def _shown(path: Path) -> str:
    absolute = path.absolute()
    try:
        relative = absolute.relative_to(Path.cwd())
    except ValueError:
        return str(absolute)
    return str(relative) if os.sep in str(relative) else f".{os.sep}{relative}"
