"""Child processes die with fayd, however fayd dies (issue 14).

A SIGTERM stops the children in the daemon's own cleanup, but a kill -9 or the OOM killer
runs no cleanup: the embedded mosquitto then lived on as an orphan, holding its port with
the old password, and the next fayd's link was refused. Linux can tie a child to its
parent: ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` in the child, between fork and exec, and the
kernel sends the signal when the parent dies.

Why a ``preexec_fn`` (and not a process group and a watcher): nothing of fayd's would be
alive to watch after a kill -9. A ``preexec_fn`` is not safe in general in a process with
threads (the child runs Python between fork and exec, and a lock another thread held at
the fork stays held); this one only calls a libc function looked up beforehand: no import,
no allocation outside the GIL's own, no lock but the GIL, which the forking thread holds.
asyncio's ``create_subprocess_exec`` passes it to ``subprocess.Popen`` unchanged; the child
watcher (a pidfd, or a thread per child) does not care how the child was started.

Two limits, both of the kernel: the signal follows the death of the *thread* that forked,
so fork from a thread that lives as long as fayd (the event loop's; a worker thread only
for a child it waits for); and a child that changes its user (mosquitto started by root
drops to its own account) loses the setting. For that case the embedded broker also
leaves a pid file that the next start reads (fayd.transport.broker.stop_stale_broker).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import signal
from collections.abc import Callable

log = logging.getLogger(__name__)

#: From <linux/prctl.h>.
PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not Linux: no parent-death signal
        return None


_prctl = _load_prctl()
_SIGTERM = int(signal.SIGTERM)


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: keep it to this one call.
    _prctl(PR_SET_PDEATHSIG, _SIGTERM, 0, 0, 0)  # type: ignore[misc]


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGTERM when fayd dies (None where the
    system cannot: pass it as it is)."""
    return _die_with_parent if _prctl is not None else None
