"""DEVICE=, USER= and TURN_ID= on fayd's log records, as journald gets them through
systemd-python's JournalHandler (fayd.logfields, fayd.service.logs)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fayd import logfields
from fayd.service import logs

JOURNAL_SOCKET = Path("/run/systemd/journal/socket")
needs_journal_handler = pytest.mark.skipif(
    logs.JournalHandler is None, reason="systemd-python is not installed (fayd[systemd])"
)


@pytest.fixture
def journal_handler() -> Iterator[tuple[logging.Handler, list[dict[str, Any]]]]:
    """The handler setup_logging installs under systemd, its journal messages kept: what
    its ``send`` (systemd.journal.send) would have written to journald's socket."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    logs.setup_logging("INFO", environ={"INVOCATION_ID": "0123abcd"})
    (handler,) = [h for h in root.handlers if h not in before]
    sent: list[dict[str, Any]] = []

    def send(message: str, /, **fields: Any) -> None:  # systemd.journal.send's call
        sent.append({"MESSAGE": message, **fields})

    handler.send = send  # type: ignore[attr-defined]
    yield handler, sent
    root.removeHandler(handler)
    handler.close()
    root.setLevel(level)


@needs_journal_handler
def test_a_bound_turn_reaches_the_journal_as_fields(journal_handler) -> None:
    handler, sent = journal_handler
    assert isinstance(handler, logs.JournalHandler)
    log = logging.getLogger("fayd.test")
    with logfields.bind(device="kitchen-1", user="rose", turn_id=7):
        log.info("turn done")
    log.info("after the turn")
    during, after = sent
    assert (during["DEVICE"], during["USER"], during["TURN_ID"]) == ("kitchen-1", "rose", "7")
    assert during["SYSLOG_IDENTIFIER"] == "fayd" and during["PRIORITY"] == "6"
    assert not {"DEVICE", "USER", "TURN_ID"} & after.keys()


@needs_journal_handler
def test_extra_wins_and_tasks_inherit_what_is_bound(journal_handler) -> None:
    _, sent = journal_handler
    log = logging.getLogger("fayd.test")

    async def later() -> None:
        await asyncio.sleep(0)
        log.warning("from a task started in the turn")

    async def turn() -> None:
        with logfields.bind(device="hall-2", turn_id=3):
            task = asyncio.create_task(later())
            log.info("speaking of", extra={"device": "door-1"})
        await task

    asyncio.run(turn())
    named, inherited = sent
    assert named["DEVICE"] == "door-1" and named["TURN_ID"] == "3"
    assert inherited["DEVICE"] == "hall-2" and "USER" not in inherited


@pytest.mark.skipif(
    logs.JournalHandler is None or not JOURNAL_SOCKET.exists() or not shutil.which("journalctl"),
    reason="journald is not running here (no /run/systemd/journal/socket or journalctl)",
)
def test_journalctl_finds_a_turn_by_its_fields() -> None:
    """The real journald: a record logged under systemd's environment, read back by field."""
    marker = uuid.uuid4().hex
    code = (
        "import logging; from fayd import logfields; from fayd.service import logs\n"
        "logs.setup_logging('INFO', environ={'INVOCATION_ID': 'x'})\n"
        f"with logfields.bind(device='kitchen-1', user='rose', turn_id='{marker}'):\n"
        "    logging.getLogger('fayd.test').info('turn done')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, env=os.environ)
    found = subprocess.run(
        ["journalctl", "--no-pager", "-o", "json", f"TURN_ID={marker}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert '"DEVICE":"kitchen-1"' in found.stdout.replace(" ", "")
    assert '"USER":"rose"' in found.stdout.replace(" ", "")
