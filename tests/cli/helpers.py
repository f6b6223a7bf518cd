"""What the command-line tests check of a finished command."""

from __future__ import annotations

import subprocess


def refused(done: subprocess.CompletedProcess[str], *words: str, status: int = 1) -> None:
    """Exit ``status`` and exactly one line on stderr holding ``words``; nothing on stdout."""
    assert done.returncode == status and done.stdout == "", done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and all(word in lines[0] for word in words), lines
    assert "Traceback" not in done.stderr
