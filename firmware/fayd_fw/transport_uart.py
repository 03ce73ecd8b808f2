# UART transport: the same frames as MQTT in COBS + CRC-32 packets (docs/protocol.md,
# "Serial framing"). After every (re)open it says hello and waits for fayd's challenge; it
# answers with a proof made with config.json's "key", and once fayd acks the proof the
# link is up (the device's frames flow). It says hello again at once when fayd answers
# "send hello first", and with back-off while no challenge comes or fayd refuses it; a
# vanished port is reopened with exponential back-off.
import time

from fayd_fw import FwError, auth, hw
from fayd_fw import protocol as p


class UartLink:
    name = "serial"

    def __init__(self, cfg, device, on_frame, on_up, on_down, hello):
        s = cfg["serial"]
        self.port = hw.Uart(s)
        self.device = device
        self.key = cfg.get("key") or ""
        self.on_frame = on_frame
        self.on_up = on_up
        self.on_down = on_down
        self.hello = hello  # () -> the hello frame's bytes
        self.decoder = p.SerialDecoder()
        self.rx = bytearray(s.get("rx_chunk", 512))
        self.rxv = memoryview(self.rx)
        # One preallocated packet buffer for every frame we send (audio included).
        self.tx = bytearray(p.packet_size(s.get("max_payload", 4096)))
        self.backoff_min = int(s.get("backoff_min_s", 0.2) * 1000)
        self.backoff_max = int(s.get("backoff_max_s", 5) * 1000)
        self.backoff = self.backoff_min
        self.next_try = time.ticks_ms()
        # Hello again while no challenge comes: fayd may have opened the port after our
        # hello (opening discards what waited), or refused us (a key added later).
        self.hello_min = int(s.get("hello_retry_s", 1) * 1000)
        self.hello_max = int(s.get("hello_retry_max_s", 30) * 1000)
        self.hello_wait = self.hello_min
        self.next_hello = time.ticks_ms()
        self.opened = False
        self.up = False  # fayd took our proof: the device's frames may flow
        self.proving = None  # the nonce of the proof sent, until fayd acks it
        self.connects = 0
        self.hellos = 0
        self.told_no_key = False

    def poll(self, now):
        if not self.opened:
            if time.ticks_diff(now, self.next_try) < 0:
                return
            try:
                self.port.open()
            except FwError as exc:
                self._fail(str(exc), now)
                return
            self.opened = True
            self.connects += 1
            self.backoff = self.backoff_min
            self.hello_wait = self.hello_min
            self.next_hello = now
            self.decoder = p.SerialDecoder()
        try:
            if not self.up and time.ticks_diff(now, self.next_hello) >= 0:
                self._say_hello(now)
            for _ in range(16):
                n = self.port.read(self.rx)
                if not n:
                    break
                for kind, payload in self.decoder.feed(bytes(self.rxv[:n])):
                    self._packet(kind, payload, now)
        except FwError as exc:
            self._fail(str(exc), now)

    def _packet(self, kind, payload, now):
        if kind == "challenge":
            self._answer(payload, now)
        elif kind == "error":
            self._error(payload, now)
        elif self.up:
            self.on_frame(kind, payload)
        elif kind == "ack" and self.proving:
            self._taken(payload)
        # else: fayd has not taken this device (yet): nothing it sends is for us

    def _answer(self, payload, now):
        """fayd's challenge: prove we hold the device's key; then the link is up."""
        try:
            nonce = p.challenge_nonce(p.decode("challenge", payload))
        except FwError as exc:
            hw.log("bad challenge: %s" % exc)
            return
        if not self.key:
            # Over serial fayd takes nothing from a board that cannot prove who it is.
            why = "no key in config.json: cannot prove who I am over serial (fayd devices add %s)"
            if not self.told_no_key:
                self.told_no_key = True
                hw.log(why % self.device)
                hw.record("auth", ok=False, why="no key")
            self._write("error", p.encode("error", p.Error("unauthorized", why % self.device)))
            return
        self._down("fayd challenged us again")  # it forgot us: prove it again
        mac = auth.serial_proof(self.key, self.device, nonce)
        self._write("proof", p.encode("proof", p.Proof(self.device, nonce, mac)))
        self.proving = nonce

    def _taken(self, payload):
        """fayd's ack of our proof: the link is up."""
        try:
            ref = p.decode("ack", payload).get("ref")
        except FwError:
            return
        if ref != self.proving:
            return
        self.proving = None
        self.up = True
        self.hello_wait = self.hello_min
        hw.record("auth", ok=True)
        hw.record("link", up=True, transport="serial", connects=self.connects)
        self.on_up(False)  # the hello went before the proof

    def _error(self, payload, now):
        try:
            frame = p.decode("error", payload)
        except FwError:
            return
        code = frame.get("code")
        message = str(frame.get("message"))
        if code == "unexpected" and "hello first" in message:
            self._down("fayd: send hello first")
            self.hellos += 1
            self._say_hello(now)  # fayd (re)opened the port after our hello
        elif code == "unauthorized":
            hw.log("fayd: unauthorized: %s" % message)
            hw.record("auth", ok=False, why=message[:120])
            self.proving = None
            self._down("fayd: unauthorized")  # hello again after the back-off
        elif self.up:
            self.on_frame("error", payload)
        else:
            hw.log("fayd: %s: %s" % (code, message))

    def _say_hello(self, now):
        self._write("hello", self.hello())
        self.next_hello = time.ticks_add(now, self.hello_wait)
        self.hello_wait = min(self.hello_wait * 2, self.hello_max)

    def _down(self, why):
        if self.up:
            self.up = False
            hw.record("link", up=False, transport="serial", why=why)
            self.on_down()

    def send(self, kind, payload, retain=False):
        if not self.up:
            raise FwError("serial link is down", "link")
        self._write(kind, payload)

    def _write(self, kind, payload):
        if not self.opened:
            raise FwError("serial port is closed", "link")
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
        self.proving = None
        self.opened = False
        self.port.close()
        self.next_try = time.ticks_add(now, self.backoff)
        if was_up or (self.connects == 0 and self.backoff == self.backoff_min):
            hw.record("link", up=False, transport="serial", why=why, retry_ms=self.backoff)
        self.backoff = min(self.backoff * 2, self.backoff_max)
        if was_up:
            self.on_down()
