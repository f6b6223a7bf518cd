"""A worker started by ``payorch serve`` ends with it, even when serve is killed with SIGKILL.

Serve stops its worker on SIGTERM itself; a SIGKILL gives it no chance, and the orphaned worker
would keep running (a restart would then add a second one). Two guards, both only for a worker
told its parent's pid (``payorch worker --parent-pid``, set by serve); a standalone worker under
a supervisor is never affected:

- Linux: ``prctl(PR_SET_PDEATHSIG, SIGTERM)``, so the kernel sends SIGTERM (a clean stop) the
  moment the parent dies.
- Everywhere: the worker loop checks ``os.getppid()`` every PARENT_CHECK_SECONDS and stops
  cleanly once it is no longer the parent (an orphan is adopted by another process). The check
  also runs at once, which covers a parent that died before the prctl was set.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import signal
import sys
from collections.abc import Callable

log = logging.getLogger("payorch.worker")

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_CHECK_SECONDS = 1.0


def signal_on_parent_death() -> None:
    """Linux only, best effort: ask the kernel for SIGTERM when our parent dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
            log.warning("prctl(PR_SET_PDEATHSIG) failed: errno %s", ctypes.get_errno())
    except (OSError, AttributeError):
        log.warning("prctl unavailable; relying on the parent check alone")


async def stop_when_orphaned(parent_pid: int, stop: Callable[[], None]) -> None:
    """Call ``stop`` once ``parent_pid`` is no longer our parent (checked now, then periodically)."""
    # noqa reason: nothing signals a parent's death portably; polling getppid is the point.
    while os.getppid() == parent_pid:  # noqa: ASYNC110
        await asyncio.sleep(PARENT_CHECK_SECONDS)
    log.warning("parent process %s is gone; stopping", parent_pid)
    stop()
