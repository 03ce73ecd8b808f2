"""A device on a serial cable (a socat PTY pair) talks to the real daemon: the same frames
as over MQTT, framed with COBS and a CRC, once it has proved its key; replies carry
Sentiment and Action."""

from __future__ import annotations

from fayd.agent.expression import load_rules, sentiment
from fayd.protocol import TextIn, encode
from fayd.protocol.serial import encode_packet
from fayd.testing.serial_board import SerialBoard


def test_a_text_turn_over_a_serial_cable(make_daemon, pty_pair) -> None:
    daemon = make_daemon({"FAYD_SERIAL_PATTERNS": str(pty_pair.a), "FAYD_SERIAL_POLL_S": "0.2"})
    # Added with a key like a real board; it proves it holds the key before it is heard.
    board = SerialBoard(pty_pair.b, "desk-1", daemon.add_device("desk-1")["key"], ("screen",))
    try:
        board.prove()
        question = encode_packet("text", encode(TextIn("Hello! How are you today?")))
        board.write(b"\xff\x13garbage from a boot log\x00" + question)
        frames = board.read(lambda got: any(k == "human" and f.is_end for k, f in got), 120.0)
    finally:
        board.close()
    texts = [f for k, f in frames if k == "human" and f.key == "text" and f.text]
    assert texts and texts[0].is_first
    rules = load_rules()
    for frame in texts:
        assert frame.sentiment == sentiment(frame.text)
        assert frame.action == rules.match(frame.text)
    status = daemon.cli("status", "--json").stdout
    assert "desk-1" in status
