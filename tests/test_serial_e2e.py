"""A device on a serial cable (a socat PTY pair) talks to the real daemon: the same frames
as over MQTT, framed with COBS and a CRC; replies carry Sentiment and Action."""

from __future__ import annotations

import os
import select
import time

from fayd.agent.expression import load_rules, sentiment
from fayd.protocol import Hello, TextIn, decode, encode
from fayd.protocol.serial import SerialDecoder, encode_packet


def read_frames(fd: int, decoder: SerialDecoder, done, within_s: float = 120.0) -> list:
    frames = []
    deadline = time.monotonic() + within_s
    while not done(frames):
        left = deadline - time.monotonic()
        assert left > 0, f"no complete reply; got {frames}"
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            for item in decoder.feed(os.read(fd, 65536)):
                if isinstance(item, tuple):
                    frames.append((item[0], decode(*item)))
    return frames


def test_a_text_turn_over_a_serial_cable(make_daemon, pty_pair) -> None:
    daemon = make_daemon({"FAYD_SERIAL_PATTERNS": str(pty_pair.a), "FAYD_SERIAL_POLL_S": "0.2"})
    fd = os.open(pty_pair.b, os.O_RDWR | os.O_NOCTTY)
    try:
        decoder = SerialDecoder()
        hello = encode_packet("hello", encode(Hello("desk-1", ("screen",), fw="test")))
        question = encode_packet("text", encode(TextIn("Hello! How are you today?")))
        # The port may be opened after our first bytes (pyserial flushes on open): say hello
        # until the daemon shows the device, as the firmware does.
        deadline = time.monotonic() + 30
        while "desk-1" not in daemon.cli("status").stdout:
            assert time.monotonic() < deadline, daemon.log_text()
            os.write(fd, hello)
            time.sleep(0.3)
        os.write(fd, b"\xff\x13garbage from a boot log\x00" + question)
        frames = read_frames(
            fd, decoder, lambda got: any(k == "human" and f.is_end for k, f in got)
        )
    finally:
        os.close(fd)
    texts = [f for k, f in frames if k == "human" and f.key == "text" and f.text]
    assert texts and texts[0].is_first
    rules = load_rules()
    for frame in texts:
        assert frame.sentiment == sentiment(frame.text)
        assert frame.action == rules.match(frame.text)
    status = daemon.cli("status", "--json").stdout
    assert "desk-1" in status
