# The sensor role's unacknowledged events on flash: an append-only log in segment files of one
# flash sector (4 KB) each, sized for hours without fayd (sensor.ring_kb), written so that
# flash wears slowly (firmware/README.md, "Event ring: size and flash wear"):
#   - nothing is rewritten in place (on LittleFS a write into the middle of a file copies its
#     4 KB block): events and acks are appended as lines, a segment is removed whole once
#     every event in it is acked;
#   - an event is synced to flash before it is sent (it survives a reset); an ack line is not
#     (lost in a reset, it costs one resend that fayd answers "duplicate"), so acks ride on
#     the next sync;
#   - the counter is written when a segment is closed, not per event: at start it is the
#     highest of that and every seq still in the log.
# When the ring is full the oldest segment goes, and its unacked events are counted into one
# summary (events.dropped) sent as an event of sensor "dropped" once the link is up.
import binascii
import json
import os

from fayd_fw import FwError
from fayd_fw import protocol as p

SEGMENT = 4096  # bytes of lines per segment file: a flash sector
SPAN = 2 * SEGMENT  # a location is segment * SPAN + offset (a line may end past SEGMENT)
MAX_EVENT = 512  # bytes of one event frame
SUMMARY = "dropped"  # sensor name of the summary of events the full ring let go
RING_KB = 384  # default: ~3,500 events of ~110 bytes (README: 4 h at one per 10 s + bursts)


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


class EventLog:
    def __init__(self, folder, ring_kb=RING_KB):
        self.dir = folder + "/events"
        self.seq_path = folder + "/events.seq"
        self.epoch_path = folder + "/events.epoch"
        self.summary_path = folder + "/events.dropped"
        self.max_segments = max(2, int(ring_kb * 1024) // SEGMENT)
        self.pending = {}  # seq -> location of its line
        self.live = {}  # segment -> how many of its events are unacked
        self.segments = []  # segment numbers on flash, oldest first; the last one is written
        self.summary = None  # what the full ring let go, not yet sent as an event
        self.next_segment = 1
        self.dirty = False  # ack lines written since the last sync
        self._cache = (None, b"")
        try:
            os.mkdir(self.dir)
        except OSError:
            pass
        try:
            with open(self.seq_path) as f:
                self.seq = int(f.read().strip() or 0)
            counted = True
        except (OSError, ValueError):
            self.seq = 0
            counted = False
        self.epoch = self._epoch(counted)
        tail = self._load()
        self._write_seq()
        if tail is None:
            self._open()
        else:  # the last segment ends with a whole line: go on writing it
            self.f = open(self._path(self.segments[-1]), "ab")
            self.size = tail
        self._trim()
        while len(self.segments) > self.max_segments:  # sensor.ring_kb was made smaller
            self._drop_oldest()
        self._migrate(folder + "/events.ring")

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

    # --- start: what the log holds ------------------------------------------------------------
    def _load(self):
        """Read every segment, oldest first: its events are pending until an ack line names
        them. Returns the size of the last segment when it ends with a whole line (it can be
        written on), else None (a reset cut its last line, or there is none: a new one)."""
        try:
            with open(self.summary_path) as f:
                self.summary = json.loads(f.read())
        except (OSError, ValueError):
            self.summary = None
        through = self.summary.get("through", 0) if self.summary else 0
        self.next_segment = through + 1  # never a number the summary says is gone
        names = [n for n in os.listdir(self.dir) if n.endswith(".log")]
        sealed = []
        tail = None
        for seg in sorted(int(n[:-4]) for n in names):
            if seg <= through:  # counted in the summary; a reset came before its removal
                _remove(self._path(seg))
                continue
            self.segments.append(seg)
            self.live[seg] = 0
            self.next_segment = seg + 1
            data = self._read(seg)
            at = 0
            while True:
                end = data.find(b"\n", at)
                if end < 0:
                    break
                self._replay_line(seg, at, data[at:end], sealed)
                at = end + 1
            tail = len(data) if at == len(data) and len(data) < SEGMENT else None
        if self.summary and self._span(self.summary) in sealed:
            self.summary = None  # sent as an event already; a reset came before the removal
            _remove(self.summary_path)
        return tail

    def _replay_line(self, seg, at, line, sealed):
        if line[:1] == b"a":
            try:
                self._forget(int(line[1:]))
            except ValueError:
                pass
            return
        try:
            frame = json.loads(line)
            seq = frame["seq"]
        except (ValueError, KeyError, TypeError):
            return  # a line cut by a reset
        self.pending[seq] = seg * SPAN + at
        self.live[seg] += 1
        self.seq = max(self.seq, seq)
        if frame.get("sensor") == SUMMARY:
            sealed.append(self._span(frame.get("data") or {}))

    def _migrate(self, old):
        """Unacked events of the ring file of earlier firmware (32 slots of 256 bytes)."""
        try:
            f = open(old, "rb")
        except OSError:
            return
        with f:
            while True:
                raw = f.read(256)
                if not raw:
                    break
                try:
                    frame = json.loads(raw.strip())
                except ValueError:
                    continue
                if frame.get("seq", 0) > 0 and frame["seq"] not in self.pending:
                    self._event(frame["seq"], json.dumps(frame).encode())
                    self.seq = max(self.seq, frame["seq"])
        self._sync()
        _remove(old)

    # --- writing ------------------------------------------------------------------------------
    def _path(self, seg):
        return "%s/%d.log" % (self.dir, seg)

    def _open(self):
        """Start the next segment: the one written from now on."""
        seg = self.next_segment
        self.next_segment += 1
        self.segments.append(seg)
        self.live[seg] = 0
        self.f = open(self._path(seg), "ab")
        self.size = 0

    def _write_seq(self):
        with open(self.seq_path, "w") as f:
            f.write(str(self.seq))

    def _sync(self):
        self.f.flush()  # LittleFS: flush is a sync (the data and the file's size committed)
        self.dirty = False

    def _append(self, line):
        if self.size + len(line) > SEGMENT and self.size:
            self._rotate()
        loc = self.segments[-1] * SPAN + self.size
        self.f.write(line)
        self.size += len(line)
        return loc

    def _rotate(self):
        self._sync()
        self.f.close()
        self._write_seq()  # the closed segment may go before the events after it are made
        self._trim()
        while len(self.segments) >= self.max_segments:
            self._drop_oldest()
        self._open()

    def _trim(self):
        """Remove the oldest segments while every event in them is acked."""
        while len(self.segments) > 1 and self.live.get(self.segments[0]) == 0:
            seg = self.segments.pop(0)
            del self.live[seg]
            _remove(self._path(seg))

    def _drop_oldest(self):
        """The ring is full: the oldest segment goes, its unacked events counted into the
        summary, which is written (with the segment's number) before the segment is removed."""
        seg = self.segments.pop(0)
        data = self._read(seg)
        summary = self.summary or {"events": 0, "sensors": {}}
        at = 0
        while True:
            end = data.find(b"\n", at)
            if end < 0:
                break
            line = data[at:end]
            at = end + 1
            if line[:1] == b"a":
                continue
            try:
                frame = json.loads(line)
            except ValueError:
                continue
            if frame.get("seq") in self.pending:
                del self.pending[frame["seq"]]
                _count(summary, frame)
        del self.live[seg]
        summary["through"] = seg
        tmp = self.summary_path + ".new"
        with open(tmp, "w") as f:
            f.write(json.dumps(summary))
        os.rename(tmp, self.summary_path)
        self.summary = summary
        _remove(self._path(seg))
        if self._cache[0] == seg:
            self._cache = (None, b"")

    def _event(self, seq, payload):
        self.pending[seq] = self._append(payload + b"\n")
        self.live[self.pending[seq] // SPAN] += 1

    def add(self, sensor, data, ts):
        """Number, keep (synced) and return (seq, payload) of a new event."""
        seq = self.seq + 1
        payload = p.encode("event", p.SensorEvent(seq, sensor, ts, data, self.epoch))
        if len(payload) > MAX_EVENT:
            raise FwError("event of %d bytes over %d" % (len(payload), MAX_EVENT), "too-large")
        self.seq = seq
        self._event(seq, payload)
        self._sync()
        return seq, payload

    def seal(self, ts):
        """The summary as an event of its own (kept like any other until acked): (seq,
        payload, data), or None when nothing was let go."""
        if not self.summary:
            return None
        data = dict(self.summary)
        data.pop("through", None)
        seq, payload = self.add(SUMMARY, data, ts)
        self.summary = None
        _remove(self.summary_path)
        return seq, payload, data

    def ack(self, seq):
        if seq not in self.pending:
            return False
        self._forget(seq)
        self._append(("a%d\n" % seq).encode())
        self.dirty = True
        self._trim()
        return True

    def _forget(self, seq):
        loc = self.pending.pop(seq, None)
        if loc is not None:
            self.live[loc // SPAN] -= 1

    def sync_acks(self):
        if self.dirty:
            self._sync()

    # --- reading ------------------------------------------------------------------------------
    def _read(self, seg):
        try:
            with open(self._path(seg), "rb") as f:
                return f.read()
        except OSError:
            return b""

    def payload(self, seq):
        """The stored frame of a pending event, or None."""
        loc = self.pending.get(seq)
        if loc is None:
            return None
        seg, at = divmod(loc, SPAN)
        if self._cache[0] != seg:
            data = self._read(seg)
            if seg != self.segments[-1]:  # closed segments do not change: keep one at hand
                self._cache = (seg, data)
        else:
            data = self._cache[1]
        end = data.find(b"\n", at)
        return data[at:end] if end > at else None

    @staticmethod
    def _span(d):
        return (d.get("first_seq"), d.get("last_seq"))


def _count(summary, frame):
    """Add one dropped event (or an earlier summary, by its counts) to ``summary``."""
    data = frame.get("data") or {}
    if frame.get("sensor") == SUMMARY and "events" in data:
        n, sensors = data["events"], data.get("sensors") or {}
        seqs = (data.get("first_seq"), data.get("last_seq"))
        times = (data.get("first_ts"), data.get("last_ts"))
    else:
        n, sensors = 1, {frame.get("sensor", "?"): 1}
        seqs = (frame["seq"], frame["seq"])
        times = (frame.get("ts"), frame.get("ts"))
    summary["events"] += n
    for name, k in sensors.items():
        summary["sensors"][name] = summary["sensors"].get(name, 0) + k
    for key, value, pick in (
        ("first_seq", seqs[0], min),
        ("last_seq", seqs[1], max),
        ("first_ts", times[0], min),
        ("last_ts", times[1], max),
    ):
        if value is not None:
            summary[key] = pick(summary[key], value) if key in summary else value
