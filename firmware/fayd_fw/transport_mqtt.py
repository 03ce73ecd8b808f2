# MQTT transport (umqtt.simple, frozen into the official ESP32 firmware): last will =
# presence offline (retained); reconnect with exponential back-off; never blocks the main
# loop for longer than one socket operation.
import time

from umqtt.simple import MQTTClient

from fayd_fw import FwError, hw
from fayd_fw import protocol as p


class MqttLink:
    name = "mqtt"

    def __init__(self, cfg, device, on_frame, on_up, on_down):
        m = cfg["mqtt"]
        self.host = m.get("host", "127.0.0.1")
        self.port = m.get("port", 1883)
        self.keepalive = m.get("keepalive_s", 30)
        self.user = m.get("user") or None
        self.password = m.get("password") or None
        self.topics = p.Topics(m.get("prefix", "fayd/v1"))
        self.device = device
        self.on_frame = on_frame
        self.on_up = on_up
        self.on_down = on_down
        self.backoff_min = int(m.get("backoff_min_s", 0.5) * 1000)
        self.backoff_max = int(m.get("backoff_max_s", 30) * 1000)
        self.backoff = self.backoff_min
        self.next_try = time.ticks_ms()
        self.last_ping = 0
        self.client = None
        self.up = False
        self.connects = 0

    def _cb(self, topic, msg):
        parsed = self.topics.parse(topic.decode())
        if parsed is None or parsed[0] != self.device or parsed[1] != "down":
            return
        self.on_frame(parsed[2], msg)

    def _connect(self):
        c = MQTTClient(self.device, self.host, self.port, self.user, self.password, self.keepalive)
        c.set_last_will(
            self.topics.up(self.device, "presence"),
            p.encode("presence", p.Presence(False)),
            True,
            1,
        )
        c.set_callback(self._cb)
        c.connect()
        self.client = c
        c.subscribe(self.topics.all_down(self.device), 1)

    def poll(self, now):
        """Connect when due; then handle what the broker sent. Never raises."""
        if not self.up:
            if time.ticks_diff(now, self.next_try) < 0:
                return
            try:
                self._connect()
            except Exception as exc:  # OSError, MQTTException, AssertionError
                self._fail("connect to %s:%d: %r" % (self.host, self.port, exc), now)
                return
            self.up = True
            self.connects += 1
            self.backoff = self.backoff_min
            self.last_ping = now
            hw.record("link", up=True, transport="mqtt", connects=self.connects)
            self.on_up()
            return
        try:
            for _ in range(20):  # bounded: audio must keep flowing
                if self.client.check_msg() is None:
                    break
            if self.keepalive and time.ticks_diff(now, self.last_ping) > self.keepalive * 500:
                self.client.ping()
                self.last_ping = now
        except Exception as exc:
            self._fail("receive: %r" % exc, now)

    def send(self, kind, payload, retain=False):
        """Publish one frame (audio at QoS 0, the rest at QoS 1); FwError when offline."""
        if not self.up:
            raise FwError("mqtt link is down", "link")
        try:
            self.client.publish(
                self.topics.up(self.device, kind), payload, retain, 0 if kind == "audio" else 1
            )
        except Exception as exc:
            self._fail("publish: %r" % exc, time.ticks_ms())
            raise FwError("mqtt publish failed", "link")

    def _fail(self, why, now):
        was_up = self.up
        self.up = False
        if self.client is not None:
            try:
                self.client.sock.close()
            except Exception:
                pass
            self.client = None
        self.next_try = time.ticks_add(now, self.backoff)
        hw.record("link", up=False, transport="mqtt", why=why, retry_ms=self.backoff)
        self.backoff = min(self.backoff * 2, self.backoff_max)
        if was_up:
            self.on_down()
