"""Serial boards prove who they are (docs/security.md, "Serial: a challenge before any
frame"): real socat PTYs, the real daemon, and the firmware on MicroPython's unix port. A
board added with `fayd devices add` answers fayd's challenge with its key and is heard; an
unknown id, a wrong key, a replayed proof and frames before the proof are refused, and
nothing of theirs reaches the registry or the database."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fayd.auth import new_device_secret, serial_proof
from fayd.protocol import Proof, SensorEvent, TextIn
from fayd.protocol.serial import KIND_CODES
from fayd.testing.firmware import FirmwareProcess, micropython
from fayd.testing.harness import DaemonProcess
from fayd.testing.serial_board import SerialBoard

from .conftest import MOSQUITTO, SOCAT, PtyPair
from .test_firmware_protocol import run_mp

BOOT_LOG = b"rst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\nets Jun  8 2016\r\n"


@dataclass
class Rig:
    """One daemon for the module, watching ``folder/ttyAUTH*``; each test plugs its own."""

    daemon: DaemonProcess
    folder: Path
    plugged: int = 0

    @contextlib.contextmanager
    def pair(self) -> Iterator[PtyPair]:
        self.plugged += 1
        pair = PtyPair(self.folder, f"ttyAUTH{self.plugged}", f"board{self.plugged}").start()
        try:
            yield pair
        finally:
            pair.stop()

    def device(self, device: str) -> dict | None:
        status = json.loads(self.daemon.cli("status", "--json").stdout)
        return next((d for d in status["devices"] if d["id"] == device), None)

    def online(self, device: str) -> bool:
        row = self.device(device)
        return bool(row and row["online"])

    def events(self, device: str) -> list[dict]:
        """The sensor events stored for ``device`` (the database, read-only)."""
        db = sqlite3.connect(f"file:{self.daemon.state / 'fayd.db'}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT sensor, data FROM device_events WHERE device = ? ORDER BY id", [device]
            ).fetchall()
        finally:
            db.close()
        return [{"sensor": sensor, "data": json.loads(data or "{}")} for sensor, data in rows]

    def listed(self) -> str:
        done = self.daemon.cli("devices", "list")
        assert done.returncode == 0, done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    if SOCAT is None or MOSQUITTO is None:
        pytest.skip("socat and mosquitto are needed (./install.sh installs them)")
    folder = tmp_path_factory.mktemp("serial-auth")
    env = {"FAYD_SERIAL_PATTERNS": str(folder / "ttyAUTH*"), "FAYD_SERIAL_POLL_S": "0.2"}
    daemon = DaemonProcess(folder / "state", env).start()
    yield Rig(daemon, folder)
    assert daemon.stop() == 0, daemon.log_text()


@contextlib.contextmanager
def board_on(pair: PtyPair, device: str, key: str | None) -> Iterator[SerialBoard]:
    board = SerialBoard(pair.b, device, key)
    try:
        yield board
    finally:
        board.close()


def event(seq: int, n: int) -> SensorEvent:
    return SensorEvent(seq=seq, sensor="door", data={"open": True, "n": n}, epoch="auth")


def until(check: Callable[[], object], what: str, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"no {what} after {within_s} s"
        time.sleep(0.2)


def hello_until_error(board: SerialBoard, within_s: float = 60.0) -> None:
    """Say hello until fayd answers with an error (it may open the port after our bytes)."""
    for _ in range(int(within_s)):
        start = len(board.frames)
        board.write(board.hello())
        board.drain(1.0)
        if board.errors(start):
            return
    raise TimeoutError(f"no error frame after {within_s} s: {board.frames}")


# --- the firmware and fayd agree, without a daemon ---------------------------------------------


@pytest.mark.skipif(micropython() is None, reason="MicroPython unix port missing")
def test_the_firmware_makes_fayds_proof_and_codes(tmp_path: Path) -> None:
    nonce = "00112233445566778899aabbccddeeff"
    script = f"""
import json
from fayd_fw import auth, protocol as p
print(json.dumps(auth.serial_proof("11" * 32, "kitchen-1", {nonce!r})))
print(json.dumps(p.KIND_CODES))
print(json.dumps(p.challenge_nonce(p.decode("challenge", b'{{"v":1,"nonce":"{nonce}"}}'))))
try:
    p.challenge_nonce({{"nonce": "ABC"}})
    print(json.dumps("taken"))
except Exception as exc:
    print(json.dumps("refused"))
"""
    proof, codes, parsed, bad = run_mp(script, tmp_path)
    assert proof == serial_proof("11" * 32, "kitchen-1", nonce)
    assert codes == KIND_CODES
    assert (parsed, bad) == (nonce, "refused")


# --- a board in Python, the real daemon -------------------------------------------------------


def test_an_added_board_proves_its_key_and_its_event_is_stored(rig: Rig) -> None:
    key = rig.daemon.add_device("auth-ok")["key"]
    with rig.pair() as pair, board_on(pair, "auth-ok", key) as board:
        first = board.prove()
        assert len(first.nonce) == 32
        board.send(event(1, 1))
        board.acked("1")
        assert rig.events("auth-ok") == [{"sensor": "door", "data": {"open": True, "n": 1}}]
        assert rig.online("auth-ok")
        [port] = [p for p in json.loads(rig.daemon.cli("status", "--json").stdout)["serial"]]
        assert port["device"] == "auth-ok" and port["auth"] == "auth-ok proved its key"

        # A board that says hello again (it restarted) gets a new challenge, and is heard
        # again once it has answered that one.
        second = board.prove()
        assert second.nonce != first.nonce
        board.send(event(2, 2))
        board.acked("2")
        assert [e["data"]["n"] for e in rig.events("auth-ok")] == [1, 2]


def test_an_unknown_id_is_refused_and_nothing_of_it_is_taken(rig: Rig) -> None:
    with rig.pair() as pair, board_on(pair, "ghost-1", None) as board:
        hello_until_error(board)
        [refusal] = board.errors()
        assert refusal.code == "unauthorized" and refusal.field == "device"
        assert "'ghost-1' has no key" in refusal.message
        assert "fayd devices add ghost-1" in refusal.message
        for _ in range(5):  # it keeps trying: refused each time, logged once
            board.write(board.hello())
            board.drain(0.3)
        board.send(event(1, 1))
        board.send(TextIn("let me in"))
        board.drain(1.0)
        kinds = {k for k, _ in board.frames}
        assert kinds == {"error"}, board.frames  # no challenge, no ack: nothing taken
        codes = [e.code for e in board.errors()]
        assert codes.count("unauthorized") == 6 and codes.count("unexpected") == 2
        assert "send hello first" in board.errors()[-1].message
    assert rig.daemon.log_text().count("device 'ghost-1' has no key") == 1
    assert "ghost-1" not in rig.listed()
    assert rig.device("ghost-1") is None
    assert rig.events("ghost-1") == []


def test_a_board_with_a_wrong_key_is_refused(rig: Rig) -> None:
    key = rig.daemon.add_device("auth-wrong")["key"]
    with rig.pair() as pair, board_on(pair, "auth-wrong", new_device_secret()) as board:
        challenge = board.challenged()
        start = len(board.frames)
        assert not board.taken(challenge)
        [refusal] = board.errors(start)
        assert refusal.code == "unauthorized" and "wrong proof for 'auth-wrong'" in refusal.message
        board.send(event(1, 1))  # after a refusal it is as if it never said hello
        board.drain(1.0)
        assert "ack" not in {k for k, _ in board.frames}
        assert board.errors()[-1].code == "unexpected"
        assert rig.events("auth-wrong") == [] and not rig.online("auth-wrong")
        [row] = [line for line in rig.listed().splitlines() if line.startswith("auth-wrong")]
        assert row.split()[1] == "never"
        # The port is not spoiled: the right key on the same connection is taken.
        board.key = key
        board.prove()
        board.send(event(2, 2))
        board.acked("2")
        assert [e["data"]["n"] for e in rig.events("auth-wrong")] == [2]


def test_a_captured_proof_is_refused_on_a_new_connection(rig: Rig) -> None:
    key = rig.daemon.add_device("auth-replay")["key"]
    with rig.pair() as pair:
        with board_on(pair, "auth-replay", key) as board:
            board.prove()
            board.send(event(1, 1))
            board.acked("1")
            hello, proof = board.hello(), board.proofs[-1]  # what a tap on the wire saw
        pair.stop()  # unplugged
        until(lambda: not rig.online("auth-replay"), "auth-replay offline")
        pair.start()  # another board on the same port replays the captured bytes
        with board_on(pair, "auth-replay", None) as thief:
            challenge = thief.challenged()
            start = len(thief.frames)
            thief.write(proof)
            thief.read(lambda fs: thief.errors(start), 10.0)
            [refusal] = thief.errors(start)
            assert refusal.code == "unauthorized", refusal
            assert "another challenge" in refusal.message
            assert challenge.nonce not in proof.decode(errors="replace")
            # Again: the challenge is used up, so now there is none to answer.
            start = len(thief.frames)
            thief.write(proof)
            thief.read(lambda fs: thief.errors(start), 10.0)
            assert "no challenge" in thief.errors(start)[0].message
            thief.write(hello + proof)  # hello and proof together: a new nonce again
            thief.send(event(2, 2))
            thief.drain(1.0)
            assert "ack" not in {k for k, _ in thief.frames}
    assert [e["data"]["n"] for e in rig.events("auth-replay")] == [1]
    assert not rig.online("auth-replay")


def test_garbage_around_the_handshake_does_not_break_it(rig: Rig) -> None:
    key = rig.daemon.add_device("auth-noisy")["key"]
    rng = random.Random(7)
    with rig.pair() as pair, board_on(pair, "auth-noisy", key) as board:
        damaged = bytearray(board.hello())
        damaged[5] ^= 0x10  # a hello with a flipped bit fails its CRC: dropped, unanswered
        noise = BOOT_LOG + rng.randbytes(300) + bytes(damaged)
        challenge = board.challenged(before=noise)
        # Between the challenge and the proof: noise, a cut-short proof, and an event,
        # which is refused (answer the challenge first) and never stored.
        start = len(board.frames)
        mac = serial_proof(key, "auth-noisy", challenge.nonce)
        cut = board.packet(Proof("auth-noisy", challenge.nonce, mac))[:-6]
        board.write(rng.randbytes(200) + cut + b"\x00" + rng.randbytes(50))
        board.send(event(99, 99))
        board.read(lambda fs: board.errors(start), 10.0)
        [refusal] = board.errors(start)
        assert refusal.code == "unauthorized" and "answer the challenge first" in refusal.message
        # A flood before the proof is answered with a burst of errors, then one a second.
        start = len(board.frames)
        for i in range(40):
            board.send(event(100 + i, 100 + i))
        board.drain(1.0)
        assert 1 <= len(board.errors(start)) < 40
        board.write(b"\x00\x00" + rng.randbytes(64) + b"\x00")  # more noise, then the proof
        assert board.taken(challenge)
        board.send(event(1, 1))
        board.acked("1")
    assert [e["data"]["n"] for e in rig.events("auth-noisy")] == [1]


def test_a_removed_device_is_dropped_at_once(rig: Rig) -> None:
    key = rig.daemon.add_device("auth-gone")["key"]
    with rig.pair() as pair, board_on(pair, "auth-gone", key) as board:
        board.prove()
        assert rig.online("auth-gone")
        start = len(board.frames)
        done = rig.daemon.cli("devices", "remove", "auth-gone")
        assert done.returncode == 0, done.stderr
        board.read(lambda fs: board.errors(start), 10.0)
        assert "was removed or replaced" in board.errors(start)[0].message
        until(lambda: not rig.online("auth-gone"), "auth-gone offline")
        board.send(event(1, 1))
        board.write(board.hello())  # and it cannot come back: it has no key any more
        board.drain(1.0)
        assert "ack" not in {k for k, _ in board.frames[start:]}
        assert "has no key" in board.errors()[-1].message
    assert rig.events("auth-gone") == []


# --- the firmware on MicroPython's unix port, the real daemon ---------------------------------


def serial_config(device: str, key: str, path: Path) -> dict:
    return {
        "device": device,
        "key": key,
        "roles": ["sensor"],
        "transport": "serial",
        "serial": {"path": str(path), "backoff_max_s": 0.5, "hello_retry_s": 0.3},
        "heartbeat_s": 1,
    }


def test_the_firmware_proves_its_key_and_its_event_is_taken(rig: Rig, firmware) -> None:
    key = rig.daemon.add_device("fw-auth")["key"]
    with rig.pair() as pair:
        fw: FirmwareProcess = firmware(serial_config("fw-auth", key, pair.b))
        fw.wait_for(lambda _rows: rig.online("fw-auth"), within_s=60, what="fw-auth online")
        assert [r["ok"] for r in fw.records("auth")][-1] is True
        fw.inject(sensor="door", data={"open": True})
        fw.wait_for(
            lambda rows: any(r["hw"] == "sensor" and r.get("acked") == 1 for r in rows),
            what="the event's ack",
        )
        assert [e["sensor"] for e in rig.events("fw-auth")] == ["door"]


def test_firmware_with_a_wrong_key_or_none_is_refused(rig: Rig, firmware) -> None:
    rig.daemon.add_device("fw-wrong")
    rig.daemon.add_device("fw-nokey")
    with rig.pair() as wrong_pair, rig.pair() as bare_pair:
        wrong = firmware(serial_config("fw-wrong", new_device_secret(), wrong_pair.b), "wrong")
        bare = firmware(serial_config("fw-nokey", "", bare_pair.b), "bare")
        wrong.wait_for(
            lambda rows: any(r["hw"] == "auth" and "wrong proof" in r.get("why", "") for r in rows),
            within_s=60,
            what="the refusal of a wrong proof",
        )
        bare.wait_for(
            lambda rows: any("no key in config.json" in r.get("msg", "") for r in rows),
            within_s=60,
            what="the board saying it has no key",
        )
        wrong.inject(sensor="door", data={"open": True})
        bare.inject(sensor="door", data={"open": True})
        said = "fw-nokey before a proof says unauthorized: no key in config.json"
        deadline = time.monotonic() + 30  # the board said it: fayd logs it a moment later
        while said not in (log := rig.daemon.log_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert log.count(said) == 1
        assert log.count("wrong proof for 'fw-wrong'") == 1
        for fw in (wrong, bare):
            assert not any(r["hw"] == "link" and r.get("up") is True for r in fw.records())
    assert not rig.online("fw-wrong") and not rig.online("fw-nokey")
    assert rig.events("fw-wrong") == [] and rig.events("fw-nokey") == []


def test_after_fayd_restarts_the_firmware_proves_itself_again(rig: Rig, firmware) -> None:
    """fayd's new link knows no one: the board's next frame draws "send hello first", and
    the board says hello, answers a new challenge and is heard again. (Last: it restarts
    the module's daemon.)"""
    key = rig.daemon.add_device("fw-again")["key"]
    with rig.pair() as pair:
        fw: FirmwareProcess = firmware(serial_config("fw-again", key, pair.b))
        fw.wait_for(lambda _rows: rig.online("fw-again"), within_s=60, what="fw-again online")
        assert rig.daemon.stop() == 0
        rig.daemon.start()
        fw.wait_for(
            lambda rows: sum(r["hw"] == "auth" and r["ok"] for r in rows) >= 2,
            within_s=120,
            what="a second proof",
        )
        fw.wait_for(lambda _rows: rig.online("fw-again"), within_s=60, what="fw-again back")
        fw.inject(sensor="door", data={"open": True})
        fw.wait_for(
            lambda rows: any(r["hw"] == "sensor" and r.get("acked") == 1 for r in rows),
            what="the event's ack",
        )
        assert [e["sensor"] for e in rig.events("fw-again")] == ["door"]
