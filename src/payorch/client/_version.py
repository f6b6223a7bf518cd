"""The client's version. The payorch-client distribution is built with the server's version
(clients/python reads the repository's one version place), so an installed client reads its own
distribution's; in a checkout, where the client rides in the server's editable install, the
server's distribution's. Nothing of the server is imported."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def _installed() -> str:
    for distribution in ("payorch-client", "payorch"):
        try:
            return version(distribution)
        except PackageNotFoundError:
            continue
    return "0+unknown"


__version__ = _installed()
