"""fayd.service.notify against a real unix datagram socket, and fayd.service.logs.

The socket stands in for systemd's notify socket: what arrives is exactly what systemd would
read. Each test runs with the plain-socket sender and, when systemd-python is installed, with
``systemd.daemon.notify`` too.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from fayd.service import logs, notify
from fayd.service.notify import Notifier

HAVE_SYSTEMD_PYTHON = notify._sd_daemon is not None

BACKENDS = [
    pytest.param(False, id="socket"),
    pytest.param(
        True,
        id="systemd-python",
        marks=pytest.mark.skipif(
            not HAVE_SYSTEMD_PYTHON, reason="systemd-python is not installed (fayd[systemd])"
        ),
    ),
]


class Listener:
    """A bound datagram socket playing systemd; ``next()`` returns one message."""

    def __init__(self, sock: socket.socket, address: str) -> None:
        self.sock, self.address = sock, address
        sock.settimeout(1.0)

    def next(self) -> str:
        return self.sock.recv(4096).decode()

    def assert_empty(self) -> None:
        self.sock.settimeout(0.05)
        with pytest.raises(TimeoutError):
            self.sock.recv(4096)


@pytest.fixture
def listener(monkeypatch: pytest.MonkeyPatch) -> Iterator[Listener]:
    # A short directory: unix socket paths are limited to 107 bytes and tmp_path can be longer.
    with tempfile.TemporaryDirectory(prefix="fayd-") as folder:
        path = str(Path(folder) / "notify")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind(path)
            monkeypatch.setenv("NOTIFY_SOCKET", path)
            yield Listener(sock, path)


@pytest.fixture
def abstract_listener(monkeypatch: pytest.MonkeyPatch) -> Iterator[Listener]:
    name = f"fayd-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        yield Listener(sock, "@" + name)


@pytest.mark.parametrize("use_library", BACKENDS)
def test_lifecycle_messages_arrive_exactly(listener: Listener, use_library: bool) -> None:
    n = Notifier(use_library=use_library)
    assert n.enabled
    assert n.status("loading models")
    assert listener.next() == "STATUS=loading models"
    assert n.ready()
    assert listener.next() == "READY=1"
    assert n.watchdog()
    assert listener.next() == "WATCHDOG=1"
    assert n.stopping()
    assert listener.next() == "STOPPING=1"
    listener.assert_empty()


@pytest.mark.parametrize("use_library", BACKENDS)
def test_abstract_socket(abstract_listener: Listener, use_library: bool) -> None:
    assert Notifier(use_library=use_library).ready()
    assert abstract_listener.next() == "READY=1"


@pytest.mark.parametrize("use_library", BACKENDS)
def test_ready_with_status_is_one_message(listener: Listener, use_library: bool) -> None:
    assert Notifier(use_library=use_library).ready("serving 2 devices")
    assert listener.next() == "READY=1\nSTATUS=serving 2 devices"


def test_status_stays_on_one_line(listener: Listener) -> None:
    # A newline would let the text smuggle in another field, e.g. a second READY=1.
    Notifier(use_library=False).status("line one\nREADY=1")
    assert listener.next() == "STATUS=line one READY=1"


def test_reloading_and_extend_timeout(listener: Listener) -> None:
    n = Notifier(use_library=False)
    n.reloading()
    reload_fields = listener.next().split("\n")
    assert reload_fields[0] == "RELOADING=1"
    assert reload_fields[1].startswith("MONOTONIC_USEC=")
    assert int(reload_fields[1].partition("=")[2]) > 0
    n.extend_timeout(90)
    assert listener.next() == "EXTEND_TIMEOUT_USEC=90000000"


def test_explicit_environment_mapping(listener: Listener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET")
    n = Notifier(environ={"NOTIFY_SOCKET": listener.address})
    assert n.ready()  # with systemd-python installed too: it falls back to the socket
    assert listener.next() == "READY=1"


@pytest.mark.parametrize("use_library", BACKENDS)
def test_without_notify_socket_nothing_happens(
    monkeypatch: pytest.MonkeyPatch, use_library: bool
) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    n = Notifier(use_library=use_library)
    assert not n.enabled
    assert n.ready() is False
    assert n.watchdog() is False
    assert n.stopping() is False


@pytest.mark.parametrize("use_library", BACKENDS)
def test_send_failure_warns_once_and_never_raises(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, use_library: bool
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", f"/nonexistent/fayd-{uuid.uuid4().hex}/notify")
    n = Notifier(use_library=use_library)
    with caplog.at_level(logging.WARNING, logger=notify.__name__):
        assert n.ready() is False
        assert n.watchdog() is False
    warnings = [r for r in caplog.records if r.name == notify.__name__]
    assert len(warnings) == 1
    assert "sd_notify" in warnings[0].getMessage()


def test_unsupported_address_is_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", "vsock:2:1234")
    assert Notifier(use_library=False).ready() is False


@pytest.mark.skipif(HAVE_SYSTEMD_PYTHON, reason="systemd-python is installed")
def test_requiring_the_library_without_it_fails_early() -> None:
    with pytest.raises(RuntimeError, match="systemd-python"):
        Notifier(use_library=True)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),
        ({"WATCHDOG_USEC": "500000"}, 0.25),
        ({}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
    ],
)
def test_watchdog_interval(env: dict[str, str], expected: float | None) -> None:
    assert Notifier(environ=env).watchdog_interval() == expected


def test_watchdog_interval_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert Notifier().watchdog_interval() == 15.0


# --- fayd.service.logs ---------------------------------------------------------------------


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    for h in root.handlers:
        if h not in handlers:
            root.removeHandler(h)
            h.close()
    root.setLevel(level)


def _ours(root: logging.Logger) -> list[logging.Handler]:
    return [h for h in root.handlers if getattr(h, logs._MARK, False)]


def test_setup_logging_is_idempotent(root_logger: logging.Logger) -> None:
    others = [h for h in root_logger.handlers if h not in _ours(root_logger)]
    logs.setup_logging("INFO", environ={})
    logs.setup_logging("debug", environ={})
    assert len(_ours(root_logger)) == 1
    assert root_logger.level == logging.DEBUG
    assert all(h in root_logger.handlers for h in others)  # pytest's own stay


def test_terminal_lines_have_a_timestamp(
    root_logger: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    logs.setup_logging("INFO", environ={})
    logging.getLogger("fayd.test").info("hello")
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.endswith("INFO    fayd.test: hello")
    assert line[2] == ":" and line[5] == ":"  # HH:MM:SS first


def test_under_systemd_without_systemd_python_lines_have_no_timestamp(
    root_logger: logging.Logger, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs, "JournalHandler", None)
    logs.setup_logging("INFO", environ={"INVOCATION_ID": "0123abcd"})
    logging.getLogger("fayd.test").warning("disk low")
    assert capsys.readouterr().err.strip().splitlines()[-1] == "WARNING fayd.test: disk low"


def test_journal_stream_gets_syslog_priority_prefixes(
    root_logger: logging.Logger, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(logs, "JournalHandler", None)
    with open(tmp_path / "journal", "w+") as stream:
        st = os.fstat(stream.fileno())
        monkeypatch.setattr(sys, "stderr", stream)
        logs.setup_logging("INFO", environ={"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"})
        log = logging.getLogger("fayd.test")
        log.info("ready")
        log.error("two\nlines")
        stream.seek(0)
        assert stream.read().splitlines() == [
            "<6>INFO fayd.test: ready",
            "<3>ERROR fayd.test: two",
            "<3>lines",
        ]


def test_inherited_journal_stream_with_stderr_elsewhere_is_not_the_journal(
    tmp_path: Path,
) -> None:
    assert not logs.stderr_is_journal({"JOURNAL_STREAM": "1:2"})
    assert not logs.stderr_is_journal({"JOURNAL_STREAM": "garbage"})
    assert not logs.stderr_is_journal({})


@pytest.mark.skipif(logs.JournalHandler is None, reason="systemd-python is not installed")
def test_under_systemd_with_systemd_python_logs_to_the_journal(
    root_logger: logging.Logger,
) -> None:
    logs.setup_logging("INFO", environ={"INVOCATION_ID": "0123abcd"})
    (handler,) = _ours(root_logger)
    assert isinstance(handler, logs.JournalHandler)


def test_bad_level_names_the_choices(root_logger: logging.Logger) -> None:
    with pytest.raises(ValueError, match=r"'LOUD'.*DEBUG"):
        logs.setup_logging("LOUD", environ={})
