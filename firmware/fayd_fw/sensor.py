# Sensor role: events numbered by a per-device sequence number that survives reboots, with
# the device clock; kept in a small file-backed ring until fayd acks them, so events made
# while offline are replayed after reconnecting (fayd stores each (device, epoch, seq) once).
# The epoch is made when the counter starts from nothing (a new or erased flash), so events
# numbered again from 1 are new events to fayd, not replays of the old ones.
import binascii
import json
import os
import time

from fayd_fw import FwError, hw
from fayd_fw import protocol as p

SLOT = 256  # bytes per stored event (one JSON frame, space padded)


class SensorRing:
    def __init__(self, folder, slots=32):
        self.path = folder + "/events.ring"
        self.seq_path = folder + "/events.seq"
        self.epoch_path = folder + "/events.epoch"
        self.slots = slots
        self.blank = b" " * SLOT
        self.pending = {}  # seq -> ticks_ms when last sent (None: not sent yet)
        self.dropped = 0
        try:
            with open(self.seq_path) as f:
                self.seq = int(f.read().strip() or 0)
            counted = True
        except (OSError, ValueError):
            self.seq = 0
            counted = False
        self.epoch = self._epoch(counted)
        try:
            f = open(self.path, "r+b")
        except OSError:
            f = open(self.path, "w+b")
            for _ in range(slots):
                f.write(self.blank)
            f.flush()
        self.f = f
        for i in range(slots):
            frame = self._read(i)
            if frame is not None:
                self.pending[frame["seq"]] = None
                self.seq = max(self.seq, frame["seq"])

    def _epoch(self, counted):
        """This counter's epoch: kept in events.epoch; a new one when the counter starts
        from nothing; "" for a counter older than epochs (it goes on where it was)."""
        try:
            with open(self.epoch_path) as f:
                return f.read().strip()
        except OSError:
            pass
        if counted:
            return ""
        epoch = binascii.hexlify(os.urandom(4)).decode()
        with open(self.epoch_path, "w") as f:
            f.write(epoch)
        return epoch

    def _read(self, slot):
        self.f.seek(slot * SLOT)
        raw = self.f.read(SLOT).strip()
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def _write(self, slot, data):
        self.f.seek(slot * SLOT)
        self.f.write(data + self.blank[len(data) :])
        self.f.flush()

    def add(self, sensor, data, ts):
        seq = self.seq + 1
        payload = p.encode("event", p.SensorEvent(seq, sensor, ts, data, self.epoch))
        if len(payload) > SLOT:
            raise FwError("event of %d bytes over %d" % (len(payload), SLOT), "too-large")
        with open(self.seq_path, "w") as f:  # the number first: never reused after a crash
            f.write(str(seq))
        self.seq = seq
        slot = seq % self.slots
        old = self._read(slot)
        if old is not None and old["seq"] in self.pending:
            del self.pending[old["seq"]]  # the ring is full: the oldest unacked event goes
            self.dropped += 1
            hw.record("sensor", overflow=old["seq"])
        self._write(slot, payload)
        self.pending[seq] = None
        return seq, payload

    def payload(self, seq):
        frame = self._read(seq % self.slots)
        if frame is None or frame.get("seq") != seq:
            return None
        return p.encode("event", frame)

    def ack(self, seq):
        if seq in self.pending:
            del self.pending[seq]
            self._write(seq % self.slots, b"")
            return True
        return False


class Sensor:
    def __init__(self, cfg, send, root="."):
        sc = cfg.get("sensor", {})
        self.ring = SensorRing(cfg.get("state_dir") or root, sc.get("slots", 32))
        self.resend_ms = int(sc.get("resend_s", 3) * 1000)
        self.send = send
        self.acked = 0

    def event(self, sensor, data):
        seq, payload = self.ring.add(sensor, data, hw.now_s())
        hw.record("sensor", seq=seq, sensor=sensor)
        self._send(seq, payload)
        return seq

    def _send(self, seq, payload):
        if self.send("event", payload):
            self.ring.pending[seq] = time.ticks_ms()
        else:
            self.ring.pending[seq] = None

    def on_ack(self, ref):
        try:
            seq = int(ref)
        except ValueError:
            return
        if self.ring.ack(seq):
            self.acked += 1
            hw.record("sensor", acked=seq, pending=len(self.ring.pending))

    def link_lost(self):
        for seq in self.ring.pending:
            self.ring.pending[seq] = None  # resend all after the reconnect

    def replay(self, now, limit=8):
        """Send unacked events, oldest first, a few per call: those not sent since the link
        came up, and those sent longer than resend_s ago (the ack may have been lost)."""
        for seq in sorted(self.ring.pending):
            if limit <= 0:
                break
            sent = self.ring.pending.get(seq)
            if sent is None or time.ticks_diff(now, sent) > self.resend_ms:
                payload = self.ring.payload(seq)
                if payload is None:
                    self.ring.pending.pop(seq, None)
                    continue
                self._send(seq, payload)
                limit -= 1
