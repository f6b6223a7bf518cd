"""The releases CHANGELOG.md names: each `## VERSION (DATE, commit HASH)` heading, or
`## VERSION (unreleased)` for the one main is building. Read by tests/test_versions.py and
tests/test_rolling_upgrade.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parent.parent / "CHANGELOG.md"
HEADING = re.compile(
    r"^## (?P<version>\S+) \((?:unreleased|(?P<date>\d{4}-\d\d-\d\d), commit (?P<commit>\S+))\)$"
)


@dataclass(frozen=True)
class Release:
    version: str
    date: str | None  # None: unreleased
    commit: str | None


def releases() -> list[Release]:
    """Newest first, as the file lists them; a `## ` heading of another shape fails."""
    found = []
    for line in CHANGELOG.read_text().splitlines():
        if line.startswith("## "):
            match = HEADING.match(line)
            assert match, f"CHANGELOG.md: a release heading of an unknown shape: {line!r}"
            found.append(Release(match["version"], match["date"], match["commit"]))
    return found


def previous_release() -> Release:
    """The newest release with a commit: the code a rolling upgrade starts from."""
    return next(release for release in releases() if release.commit is not None)
