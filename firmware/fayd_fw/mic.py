# Microphone role: I2S capture -> binary audio frames (512 samples = 32 ms at 16 kHz), with
# one preallocated frame buffer: the header is packed in place, I2S reads into the rest.
# mode "ptt" sends one utterance per push-to-talk (START ... END); "stream" sends always
# (fayd's VAD finds the speech).
import time

from fayd_fw import hw
from fayd_fw import protocol as p

FRAME_SAMPLES = 512


class Mic:
    def __init__(self, cfg, send):
        mc = cfg.get("mic", {})
        self.rate = mc.get("rate", 16000)
        self.mode = mc.get("mode", "ptt")
        self.i2s = hw.I2SIn(mc, self.rate)
        self.send = send
        self.buf = bytearray(p.HEADER_SIZE + FRAME_SAMPLES * 2)
        self.pcm = memoryview(self.buf)[p.HEADER_SIZE :]
        self.frame_ms = FRAME_SAMPLES * 1000 // self.rate
        self.stream = 0
        self.seq = 0
        self.active = self.mode == "stream"
        self.next_at = time.ticks_ms()
        self.sent = 0

    def talk(self):
        self.i2s.rewind()
        self.stream = (self.stream + 1) & 0xFFFF
        self.seq = 0
        self.active = True
        self.next_at = time.ticks_ms()

    def tick(self, now):
        if not self.active or time.ticks_diff(now, self.next_at) < 0:
            return
        n = self.i2s.readinto(self.pcm)
        end = self.mode == "ptt" and n < len(self.pcm)
        if n == 0 and not end:
            return
        n -= n % 2
        p.pack_audio_header(self.buf, self.stream, self.seq, self.rate, self.seq == 0, end)
        self.send("audio", memoryview(self.buf)[: p.HEADER_SIZE + n])
        self.sent += 1
        self.seq += 1
        self.next_at = time.ticks_add(self.next_at, self.frame_ms)
        if end:
            self.active = False
            hw.record("mic", stream=self.stream, frames=self.seq)
