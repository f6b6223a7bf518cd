"""What the browser tests share: Debian's Chromium, a live server's address, the widths every
page is looked at, and where screenshots go."""

from __future__ import annotations

from dataclasses import dataclass

CHROMIUM = "/usr/bin/chromium"


@dataclass
class Server:
    url: str
    env: dict[str, str]
