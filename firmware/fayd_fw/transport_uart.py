# UART transport: the same frames as MQTT in COBS + CRC-32 packets (docs/protocol.md,
# "Serial framing"). Says hello after every (re)open and again whenever fayd answers
# "send hello first"; reopens a vanished port with exponential back-off.
import time

from fayd_fw import FwError, hw
from fayd_fw import protocol as p


class UartLink:
    name = "serial"

    def __init__(self, cfg, device, on_frame, on_up, on_down):
        s = cfg["serial"]
        self.port = hw.Uart(s)
        self.device = device
        self.on_frame = on_frame
        self.on_up = on_up
        self.on_down = on_down
        self.decoder = p.SerialDecoder()
        self.rx = bytearray(s.get("rx_chunk", 512))
        self.rxv = memoryview(self.rx)
        # One preallocated packet buffer for every frame we send (audio included).
        self.tx = bytearray(p.packet_size(s.get("max_payload", 4096)))
        self.backoff_min = int(s.get("backoff_min_s", 0.2) * 1000)
        self.backoff_max = int(s.get("backoff_max_s", 5) * 1000)
        self.backoff = self.backoff_min
        self.next_try = time.ticks_ms()
        self.up = False
        self.connects = 0
        self.hellos = 0

    def poll(self, now):
        if not self.up:
            if time.ticks_diff(now, self.next_try) < 0:
                return
            try:
                self.port.open()
            except FwError as exc:
                self._fail(str(exc), now)
                return
            self.up = True
            self.connects += 1
            self.backoff = self.backoff_min
            self.decoder = p.SerialDecoder()
            hw.record("link", up=True, transport="serial", connects=self.connects)
            self.on_up()
            return
        try:
            for _ in range(16):
                n = self.port.read(self.rx)
                if not n:
                    break
                for kind, payload in self.decoder.feed(bytes(self.rxv[:n])):
                    if kind == "error" and b"hello first" in payload:
                        self.hellos += 1
                        self.on_up()  # fayd (re)opened the port after our hello
                    else:
                        self.on_frame(kind, payload)
        except FwError as exc:
            self._fail(str(exc), now)

    def send(self, kind, payload, retain=False):
        if not self.up:
            raise FwError("serial link is down", "link")
        if p.packet_size(len(payload)) > len(self.tx):
            data = p.encode_packet(kind, payload)  # a rare big JSON frame
            n = len(data)
        else:
            n = p.encode_packet_into(self.tx, kind, payload)
            data = memoryview(self.tx)[:n]
        try:
            self.port.write(data)
        except FwError as exc:
            self._fail(str(exc), time.ticks_ms())
            raise

    def _fail(self, why, now):
        was_up = self.up
        self.up = False
        self.port.close()
        self.next_try = time.ticks_add(now, self.backoff)
        if was_up or (self.connects == 0 and self.backoff == self.backoff_min):
            hw.record("link", up=False, transport="serial", why=why, retry_ms=self.backoff)
        self.backoff = min(self.backoff * 2, self.backoff_max)
        if was_up:
            self.on_down()
