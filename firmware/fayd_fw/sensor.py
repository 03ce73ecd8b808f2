# Sensor role: events numbered by a per-device sequence number that survives reboots, with
# the device clock; kept on flash (fayd_fw.ring: hours of them) until fayd acks them, so
# events made while offline are replayed after reconnecting (fayd stores each (device,
# epoch, seq) once). The epoch is made when the counter starts from nothing (a new or erased
# flash), so events numbered again from 1 are new events to fayd, not replays of the old ones.
import time

from fayd_fw import hw
from fayd_fw.ring import RING_KB, EventLog

ACK_SYNC_MS = 5000  # ack lines reach flash at least this often (or with the next event)
RESEND_SCAN_MS = 250  # how often events sent without an ack are looked over


class Sensor:
    def __init__(self, cfg, send, root="."):
        sc = cfg.get("sensor", {})
        self.ring = EventLog(cfg.get("state_dir") or root, sc.get("ring_kb", RING_KB))
        self.resend_ms = int(sc.get("resend_s", 3) * 1000)
        self.send = send
        self.acked = 0
        self.sent = {}  # seq -> ticks_ms when last sent, for events awaiting their ack
        self.urgent = set()  # unacked urgent seqs: first in the queue after a link loss
        self.last_sync = self.last_scan = time.ticks_ms()
        self.link_lost()

    def event(self, sensor, data, urgent=False):
        """Keep (on flash) and send one event. ``urgent`` (a panic press, a fall): when it
        cannot go now it is the first sent once the link is back, before older events."""
        seq, payload = self.ring.add(sensor, data, hw.now_s())
        hw.record("sensor", seq=seq, sensor=sensor, data=data)
        self._send(seq, payload, urgent)
        return seq

    def _out(self, seq, payload, now):
        """Send one kept event; False when the link is down."""
        if not self.send("event", payload):
            return False
        self.sent[seq] = now
        hw.record("sensor", sent=seq)
        return True

    def _send(self, seq, payload, urgent=False):
        if urgent:
            self.urgent.add(seq)
        if self._out(seq, payload, time.ticks_ms()):
            return True
        if urgent:  # ahead of the unsent backlog, after the urgent ones already waiting
            at = self.qi
            while at < len(self.queue) and self.queue[at] in self.urgent:
                at += 1
            self.queue.insert(at, seq)
        else:
            self.queue.append(seq)  # seqs only grow: the queue stays oldest first
        return False

    def on_ack(self, ref):
        try:
            seq = int(ref)
        except ValueError:
            return
        self.sent.pop(seq, None)
        self.urgent.discard(seq)
        if self.ring.ack(seq):
            self.acked += 1
            hw.record("sensor", acked=seq, pending=len(self.ring.pending))

    def link_lost(self):
        """Everything unacked is sent again, oldest first, once the link is back."""
        first = sorted(s for s in self.urgent if s in self.ring.pending)
        self.queue = first + sorted(s for s in self.ring.pending if s not in self.urgent)
        self.qi = 0
        self.sent = {}

    def replay(self, now, limit=8):
        """While the link is up: the summary of what a full ring let go, then unacked events
        not sent since the link came up (a few per call, oldest first), and those sent
        longer than resend_s ago (the ack may have been lost)."""
        sealed = self.ring.seal(hw.now_s())
        if sealed:
            seq, payload, data = sealed
            hw.record("sensor", seq=seq, sensor="dropped", summary=data)
            self._send(seq, payload)
        while limit > 0 and self.qi < len(self.queue):
            seq = self.queue[self.qi]
            self.qi += 1
            payload = self.ring.payload(seq)
            if payload is None:
                continue  # acked, or counted into the summary
            if not self._out(seq, payload, now):
                self.qi -= 1
                return
            limit -= 1
        if self.qi and self.qi == len(self.queue):
            self.queue, self.qi = [], 0
        if time.ticks_diff(now, self.last_scan) >= RESEND_SCAN_MS:
            self.last_scan = now
            self._resend(now, limit)
        if time.ticks_diff(now, self.last_sync) >= ACK_SYNC_MS:
            self.last_sync = now
            self.ring.sync_acks()

    def _resend(self, now, limit):
        for seq in sorted(self.sent, key=lambda s: (s not in self.urgent, s)):  # urgent first
            if limit <= 0:
                return
            # send() may lose the link (link_lost empties self.sent) or take an ack.
            last = self.sent.get(seq)
            if last is None or time.ticks_diff(now, last) <= self.resend_ms:
                continue
            payload = self.ring.payload(seq)
            if payload is None:
                self.sent.pop(seq, None)
            elif self._out(seq, payload, now):
                limit -= 1
            else:
                return  # the link is down: everything is queued again when it is back
