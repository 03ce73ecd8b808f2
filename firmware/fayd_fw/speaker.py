# Speaker role: downlink audio frames -> I2S playback. "command stop" stops the current
# reply at once; its remaining frames are dropped until a new stream starts.
from fayd_fw import hw


class Speaker:
    def __init__(self, cfg):
        sc = cfg.get("speaker", {})
        self.rate = sc.get("rate", 22050)
        self.out = hw.I2SOut(sc)
        self.out.set_volume(cfg.get("volume", 80))
        self.stream = None
        self.stopped = None
        self.bytes = 0

    def audio(self, stream, seq, rate, pcm, start, end):
        if stream == self.stopped and not start:
            return
        if start or stream != self.stream:
            self.stream = stream
            self.stopped = None
            self.out.open(rate)
            hw.record("speaker", start=stream, rate=rate)
        if len(pcm):
            self.out.write(pcm)
            self.bytes += len(pcm)
        if end:
            hw.record("speaker", end=stream, seq=seq)
            self.stream = None

    def stop(self):
        if self.stream is not None:
            self.stopped = self.stream
            self.stream = None
            self.out.stop()

    def set_volume(self, volume):
        self.out.set_volume(volume)
