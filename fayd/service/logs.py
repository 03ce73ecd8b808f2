"""Logging set-up: the journal under systemd, compact stderr lines otherwise.

Under systemd (``JOURNAL_STREAM`` or ``INVOCATION_ID`` set) with systemd-python installed, records
go straight to journald with ``SYSLOG_IDENTIFIER=fayd`` and their level as the priority. Without
systemd-python, stderr is what systemd connected to the journal, so lines carry no timestamp
(journald adds one) and, when stderr is verifiably the journal stream, a ``<N>`` syslog priority
prefix that journald turns into the entry's priority (``SyslogLevelPrefix=``, on by default).
Elsewhere (a terminal, tests) lines get a short timestamp.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

from fayd.logfields import FieldsFilter
from fayd.logwords import PrivacyFilter

try:  # the optional [systemd] extra
    from systemd.journal import JournalHandler
except ImportError:
    JournalHandler = None

IDENTIFIER = "fayd"
TERMINAL_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
TERMINAL_DATEFMT = "%H:%M:%S"
JOURNAL_FORMAT = "%(levelname)s %(name)s: %(message)s"

#: Python level -> syslog priority (journald's PRIORITY=).
_PRIORITIES = {
    logging.CRITICAL: 2,
    logging.ERROR: 3,
    logging.WARNING: 4,
    logging.INFO: 6,
    logging.DEBUG: 7,
}

#: Marks the handler this module installed, so a second call replaces it instead of adding one.
_MARK = "_fayd_handler"


class _PriorityFormatter(logging.Formatter):
    """Prefixes every line with its syslog priority for journald to parse.

    journald stores each stderr line as its own entry, so a traceback's lines all get the
    prefix and stay at the record's priority.
    """

    def format(self, record: logging.LogRecord) -> str:
        priority = next((p for level, p in _PRIORITIES.items() if record.levelno >= level), 7)
        return "\n".join(f"<{priority}>{line}" for line in super().format(record).splitlines())


def under_systemd(environ: Mapping[str, str] | None = None) -> bool:
    """True when started by systemd (its service environment sets these)."""
    env = os.environ if environ is None else environ
    return bool(env.get("JOURNAL_STREAM") or env.get("INVOCATION_ID"))


def stderr_is_journal(environ: Mapping[str, str] | None = None) -> bool:
    """True when stderr is the journal stream systemd connected (``JOURNAL_STREAM=dev:inode``).

    The variable is inherited by children whose stderr is elsewhere (a terminal), hence the
    comparison that sd_journal_stream_fd(3) recommends.
    """
    env = os.environ if environ is None else environ
    try:
        dev, ino = (int(part) for part in env.get("JOURNAL_STREAM", "").split(":"))
        st = os.fstat(sys.stderr.fileno())
    except (ValueError, OSError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (dev, ino)


def _parse_level(level: str | int) -> int:
    if isinstance(level, int):
        return level
    levels = logging.getLevelNamesMapping()
    try:
        return levels[level.strip().upper()]
    except KeyError:
        raise ValueError(f"log level {level!r} is not one of {', '.join(sorted(levels))}") from None


def _make_handler(environ: Mapping[str, str]) -> logging.Handler:
    if under_systemd(environ) and JournalHandler is not None:
        journal = JournalHandler(SYSLOG_IDENTIFIER=IDENTIFIER)
        journal.setFormatter(logging.Formatter("%(name)s: %(message)s"))  # level = PRIORITY=
        journal.addFilter(FieldsFilter())  # DEVICE=, USER=, TURN_ID= (fayd.logfields)
        return journal
    handler = logging.StreamHandler(sys.stderr)
    if stderr_is_journal(environ):
        handler.setFormatter(_PriorityFormatter(JOURNAL_FORMAT))
    elif under_systemd(environ):  # stderr goes to a file or syslog that stamps lines itself
        handler.setFormatter(logging.Formatter(JOURNAL_FORMAT))
    else:
        handler.setFormatter(logging.Formatter(TERMINAL_FORMAT, TERMINAL_DATEFMT))
    return handler


def setup_logging(
    level: str | int = "INFO", environ: Mapping[str, str] | None = None, words: bool = False
) -> None:
    """Route the root logger to the journal or stderr at ``level``; safe to call again.

    People's words reach the log only in DEBUG records and only with ``words`` (``[log]
    words``); secrets in URLs never (fayd.logwords). A repeated call replaces the handler it
    installed earlier (and picks up a new level or environment) and leaves handlers
    installed by others (pytest's, for example) alone.
    """
    numeric = _parse_level(level)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(old)
        old.close()
    handler = _make_handler(os.environ if environ is None else environ)
    setattr(handler, _MARK, True)
    handler.addFilter(PrivacyFilter(show_words=words))
    root.addHandler(handler)
    root.setLevel(numeric)
