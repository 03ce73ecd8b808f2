# Microphone role: I2S capture -> binary audio frames (512 samples = 32 ms at 16 kHz), with
# one preallocated frame buffer: the header is packed in place, I2S reads into the rest.
# mic.mode "stream" sends always, as one endless stream (fayd's VAD finds the speech, and its
# wake word, when set, decides what is answered); "ptt" sends one utterance per press of the
# push-to-talk button (mic.ptt_pin): START on press, END on release. The default is "ptt"
# when a ptt_pin is set, else "stream", so a board without a button still talks.
import time

from fayd_fw import FwError, hw
from fayd_fw import protocol as p

FRAME_SAMPLES = 512


def mode_of(mc):
    mode = mc.get("mode") or ("ptt" if mc.get("ptt_pin") is not None else "stream")
    if mode not in ("ptt", "stream"):
        raise FwError('mic.mode must be "ptt" or "stream", not %r' % mode, "hw")
    return mode


class Mic:
    def __init__(self, cfg, send):
        mc = cfg.get("mic", {})
        self.rate = mc.get("rate", 16000)
        self.mode = mode_of(mc)
        self.i2s = hw.I2SIn(mc, self.rate)
        self.send = send
        self.buf = bytearray(p.HEADER_SIZE + FRAME_SAMPLES * 2)
        self.pcm = memoryview(self.buf)[p.HEADER_SIZE :]
        self.frame_ms = FRAME_SAMPLES * 1000 // self.rate
        self.stream = 0
        self.seq = 0
        self.active = False
        self.held = False  # the push-to-talk button is down
        self.whole = False  # an utterance that ends when the recording does (host "talk")
        self.next_at = time.ticks_ms()
        self.sent = 0
        if self.mode == "stream":
            self._start()
        hw.record("mic", mode=self.mode)

    def caps(self):
        return {"mic": self.mode}

    def _start(self):
        self.stream = (self.stream + 1) & 0xFFFF
        self.seq = 0
        self.active = True
        self.next_at = time.ticks_ms()

    def talk(self):
        """Host: one utterance from the start of mic.pcm to its end."""
        self.i2s.rewind()
        self.whole = True
        self._start()

    def ptt(self, pressed):
        """The push-to-talk button went down (an utterance starts) or up (it ends)."""
        hw.record("mic", ptt=pressed)
        if self.mode != "ptt" or pressed == self.held:
            return
        self.held = pressed
        if pressed:
            self.i2s.skip()
            self.whole = False
            self._start()

    def link_up(self):
        """A new connection: a new stream, so fayd's VAD starts afresh (stream mode)."""
        if self.mode == "stream":
            self._start()

    def tick(self, now):
        if not self.active or time.ticks_diff(now, self.next_at) < 0:
            return
        n = self.i2s.readinto(self.pcm)
        if self.whole:
            end = n < len(self.pcm)  # the recording is over
        else:
            end = self.mode == "ptt" and not self.held  # released: END, with what came
        if n == 0 and not end:
            self.next_at = now  # nothing yet (host): no burst to catch up later
            return
        n -= n % 2
        p.pack_audio_header(self.buf, self.stream, self.seq, self.rate, self.seq == 0, end)
        self.send("audio", memoryview(self.buf)[: p.HEADER_SIZE + n])
        self.sent += 1
        self.seq = (self.seq + 1) & 0xFFFFFFFF  # u32 on the wire: 4 years of streaming
        self.next_at = time.ticks_add(self.next_at, self.frame_ms)
        if end:
            self.active = self.whole = False
            hw.record("mic", stream=self.stream, frames=self.seq)
