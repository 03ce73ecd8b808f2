# MQTT transport (umqtt.simple, frozen into the official ESP32 firmware): last will =
# presence offline (retained); reconnect with exponential back-off; never blocks the main
# loop for longer than one socket operation. The device logs in as its id with the password
# derived from its key (fayd's broker admits nobody else), over TLS when mqtt.tls is set.
import binascii
import time

from umqtt.simple import MQTTClient

from fayd_fw import FwError, hw
from fayd_fw import protocol as p
from fayd_fw.auth import mqtt_password


def credentials(cfg, device):
    """(user, password): mqtt.user/password when set (another broker's accounts), else the
    device id and the password derived from config.json's "key"."""
    m = cfg["mqtt"]
    if m.get("user"):
        return m["user"], m.get("password") or None
    if cfg.get("key"):
        return device, mqtt_password(cfg["key"])
    return None, None


def tls_ca(m):
    """The household CA (mqtt.ca: fayd's ca.crt copied onto the device) when mqtt.tls is on,
    in DER (MicroPython's mbedTLS takes PEM only NUL-terminated): the broker's certificate
    must chain to it and name the host."""
    if not m.get("tls"):
        return None
    with open(m["ca"], "rb") as f:
        data = f.read()
    if data.lstrip().startswith(b"-----BEGIN"):
        body = [ln for ln in data.split(b"\n") if ln.strip() and not ln.startswith(b"-----")]
        data = binascii.a2b_base64(b"".join(body))
    return data


def make_client(device, host, port, user, password, keepalive, ca):
    if ca is None:
        return MQTTClient(device, host, port, user, password, keepalive)
    import ssl

    params = {"cert_reqs": ssl.CERT_REQUIRED, "cadata": ca, "server_hostname": host}
    try:  # umqtt.simple 1.3: ssl=True and wrap_socket's arguments
        return MQTTClient(device, host, port, user, password, keepalive, True, params)
    except TypeError:  # 1.4 and later take an SSLContext
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cadata=ca)
        return MQTTClient(device, host, port, user, password, keepalive, ctx)


class MqttLink:
    name = "mqtt"

    def __init__(self, cfg, device, on_frame, on_up, on_down):
        m = cfg["mqtt"]
        self.host = m.get("host", "127.0.0.1")
        self.port = m.get("port", 1883)
        self.keepalive = m.get("keepalive_s", 30)
        self.user, self.password = credentials(cfg, device)
        self.ca = tls_ca(m)
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
        self.inbox = []  # frames received, handled after check_msg returns

    def _cb(self, topic, msg):
        # Only queued here: handling a frame may publish (an ack), and umqtt.simple's QoS 1
        # publish waits for its PUBACK by reading the socket; called from this callback it
        # would swallow the PUBACK the outer publish waits for, which then hangs until the
        # broker drops the connection.
        parsed = self.topics.parse(topic.decode())
        if parsed is None or parsed[0] != self.device or parsed[1] != "down":
            return
        self.inbox.append((parsed[2], msg))

    def _connect(self):
        c = make_client(
            self.device, self.host, self.port, self.user, self.password, self.keepalive, self.ca
        )
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
            self._handle()
            if self.keepalive and time.ticks_diff(now, self.last_ping) > self.keepalive * 500:
                self.client.ping()
                self.last_ping = now
        except Exception as exc:
            self._fail("receive: %r" % exc, now)

    def _handle(self):
        while self.inbox and self.up:
            kind, msg = self.inbox.pop(0)
            self.on_frame(kind, msg)

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
        self.inbox = []  # fayd sends what matters again after the next hello
        self.next_try = time.ticks_add(now, self.backoff)
        hw.record("link", up=False, transport="mqtt", why=why, retry_ms=self.backoff)
        self.backoff = min(self.backoff * 2, self.backoff_max)
        if was_up:
            self.on_down()
