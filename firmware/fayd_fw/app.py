# The device: config.json -> transport (MQTT or UART) + roles, one cooperative main loop.
import json
import time

from fayd_fw import FwError, hw
from fayd_fw import protocol as p


def load_config(path):
    with open(path) as f:
        return json.load(f)


class Device:
    def __init__(self, cfg, base_dir, root=None):
        """``base_dir``: the running app's folder (fayd_fw/ is in it); ``root``: the device's
        filesystem root, where ota.json, the OTA app folders and the event ring live (default:
        hw.state_dir: on the host never the firmware's own folder)."""
        self.cfg = cfg
        self.id = cfg["device"]
        self.roles = cfg.get("roles", [])
        hw.setup(cfg)
        root = root or hw.state_dir(cfg)
        try:
            from version import FW_VERSION
        except ImportError:
            FW_VERSION = "unknown"
        self.fw = FW_VERSION
        from fayd_fw.ota import Ota

        confirm_s = cfg.get("ota", {}).get("confirm_s", 300)
        self.ota = Ota(root or base_dir, self.fw, confirm_s, self.id, cfg.get("key", ""))
        self.heard = False  # a frame from fayd since the link came up (confirms an update)
        self.robot = self.screen = self.speaker = self.mic = self.sensor = self.drivers = None
        if "robot" in self.roles:
            from fayd_fw.robot import Robot

            self.robot = Robot(cfg, base_dir + "/fayd_fw")
        if "screen" in self.roles:
            from fayd_fw.screen import Screen

            self.screen = Screen(cfg)
        if "speaker" in self.roles:
            from fayd_fw.speaker import Speaker

            self.speaker = Speaker(cfg)
        if "mic" in self.roles:
            from fayd_fw.mic import Mic

            self.mic = Mic(cfg, self.send)
        if "sensor" in self.roles:
            from fayd_fw.sensor import Sensor

            self.sensor = Sensor(cfg, self.send, root)
        self.inputs = hw.Inputs(cfg)
        if cfg.get("transport", "mqtt") == "serial":
            from fayd_fw.transport_uart import UartLink

            if cfg["serial"].get("uart") == "usb" and hw.console_wanted():
                raise FwError("BOOT held: the USB console stays the REPL; no link", "hw")

            # Over serial the link says hello itself, then proves the key (transport_uart).
            self.link = UartLink(cfg, self.id, self.on_frame, self.on_up, self.on_down, self.hello)
        else:
            from fayd_fw.transport_mqtt import MqttLink

            self.link = MqttLink(cfg, self.id, self.on_frame, self.on_up, self.on_down)
        if self.sensor:
            from fayd_fw.drivers import Drivers

            self.drivers = Drivers(cfg, self.sensor)  # the parts in config's "sensor"
        self.hb_ms = int(cfg.get("heartbeat_s", 30) * 1000)
        self.hb_seq = 0
        self.last_hb = time.ticks_ms()
        self.started = time.ticks_ms()
        self.texts = 0

    # --- link ------------------------------------------------------------------------------
    def send(self, kind, payload, retain=False):
        """Send one frame; False (and nothing raised) when the link is down."""
        if not self.link.up:
            return False
        try:
            self.link.send(kind, payload, retain)
            return True
        except FwError:
            return False

    def hello(self):
        caps = self.ota.caps()
        for role in (self.robot, self.screen, self.mic):
            if role is not None:
                caps.update(role.caps())
        frame = p.Hello(
            self.id,
            self.roles,
            self.fw,
            caps,
            self.mic.rate if self.mic else None,
            self.speaker.rate if self.speaker else None,
            self.cfg.get("user"),
        )
        return p.encode("hello", frame)

    def on_up(self, hello=True):
        """The link is up; ``hello`` False when the link already said it (serial)."""
        self.heard = False
        if self.mic:
            self.mic.link_up()
        if hello:
            self.send("hello", self.hello(), True)
        self.send("presence", p.encode("presence", p.Presence(True)), True)
        hw.record("hello", transport=self.link.name)

    def on_down(self):
        if self.robot:
            self.robot.safe_stop()
        if self.speaker:
            self.speaker.stop()
        if self.screen:
            self.screen.idle()
        if self.sensor:
            self.sensor.link_lost()

    # --- frames from fayd --------------------------------------------------------------------
    def on_frame(self, kind, payload):
        ref = None
        try:
            frame = p.decode(kind, payload)
            if not self.heard:
                self.heard = True
                if self.ota.trial:  # connected and fayd talks to us: the update works
                    self.ota.confirm()
            if kind == "command":
                ref = frame.get("id")
            self.handle(kind, frame)
        except FwError as exc:
            hw.log("bad %s frame: %s" % (kind, exc))
            if kind != "error":
                self.send("error", p.encode("error", p.Error(exc.code, str(exc), ref)))

    def handle(self, kind, frame):
        if kind == "audio":
            if self.speaker:
                self.speaker.audio(*frame)
        elif kind == "human":
            self.human(p.human_data(frame))
        elif kind == "command":
            self.command(frame)
        elif kind == "ack":
            if self.sensor:
                self.sensor.on_ack(frame.get("ref", ""))
        elif kind == "error":
            hw.log("fayd: %s: %s" % (frame.get("code"), frame.get("message")))
        elif kind == "alert":
            hw.record("alert", id=frame.get("id"), severity=frame.get("severity"))
            if self.screen:
                self.screen.show_text(str(frame.get("text") or ""), 1)
        else:
            raise FwError("fayd may not send %s frames" % kind, "unexpected")

    def human(self, d):
        key = d.get("Key")
        action = p.Action(d)
        text = d.get("Text") if key == "audio" else d.get("Value") if key == "text" else ""
        hw.record(
            "rx",
            kind="human",
            key=key,
            text=text or "",
            first=d.get("IsFirst", 0),
            end=d.get("IsEnd", 0),
            action=action and list(action),
            lips=len(d.get("Lips") or ()),
        )
        # A speaker moves with its speech (audio chunks); a silent robot with the text. A
        # text frame with an action and no text is a bare action (a skill's): any robot.
        motion_key = "audio" if self.speaker else "text"
        bare = key == "text" and not text and not d.get("IsEnd")
        if action and self.robot and (key == motion_key or bare):
            self.robot.act(action)
        if self.screen:
            if key == "log":
                self.screen.state(d.get("Value") or "")
            if key == "text" and text:
                self.screen.show_text(text, d.get("IsFirst", 0))
            if action and text:
                self.screen.affect(action[2])
            if key == "audio" and d.get("Lips"):
                self.screen.lip_track(d["Lips"])

    def command(self, c):
        """Every command fayd sends (docs/protocol.md, "command (down)"). One with an ``id`` is
        answered: ``ack`` (``ok: false`` and a ``detail`` when this device has nothing to do
        it with, e.g. ``volume`` without a speaker) or ``error`` (bad arguments, an unknown
        name)."""
        name = c.get("name")
        args = c.get("args") or {}
        if not isinstance(args, dict):
            raise FwError("command args must be an object")
        if isinstance(name, str) and name.startswith("ota_"):
            extra = self.ota.handle(name, args)  # FwError: an error frame with the ref
        elif name == "settings":
            extra = self.settings(args)
        elif name == "stop":
            extra = self.stop()
        elif name == "volume":
            extra = self.volume(_level(args.get("volume"), "volume"))
        elif name == "brightness":
            extra = self.brightness(_level(args.get("level"), "level"))
        else:
            raise FwError("unknown command %r" % name, "unknown")
        if not name.startswith("ota_"):
            hw.record("command", name=name, **extra)
        if c.get("id"):
            ack = p.Ack(c["id"])
            ack.update(extra)  # extra fields: ignored by frame decoders
            self.send("ack", p.encode("ack", ack))

    def stop(self):
        """Stop the current reply: its speech, its mouth track, and the robot's motion."""
        if self.speaker:
            self.speaker.stop()
        if self.screen:
            self.screen.idle()
        if self.robot and self.robot.current is not None:
            self.robot.safe_stop()
        return {}

    def volume(self, level):
        if not self.speaker:
            return {"ok": False, "detail": "no speaker"}
        self.speaker.set_volume(level)
        return {}

    def brightness(self, level):
        if not self.screen:
            return {"ok": False, "detail": "no screen"}
        self.screen.display.brightness(level)
        return {}

    def settings(self, args):
        """The household's settings for this device (``fayd devices set``), sent after
        every hello and on each change. Checked first, so a bad value changes nothing; the
        ack lists the keys applied here and those this device has nothing for ("ignored":
        fayd itself applies wake, wake_threshold and barge_in to the audio it gets; keys of
        a newer fayd are ignored too)."""
        if "volume" in args:
            _level(args["volume"], "volume")
        for key in ("wake", "barge_in"):
            if key in args and not isinstance(args[key], bool):
                raise FwError("settings: %s must be true or false" % key)
        threshold = args.get("wake_threshold", 0)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise FwError("settings: wake_threshold must be a number")
        applied, ignored = [], []
        for key in sorted(args):
            if key == "volume" and self.speaker:
                self.speaker.set_volume(args["volume"])
                applied.append(key)
            else:
                ignored.append(key)
        return {"applied": applied, "ignored": ignored}

    # --- inputs and the loop -----------------------------------------------------------------
    def on_input(self, item):
        if "text" in item:
            self.texts += 1
            self.send(
                "text",
                p.encode("text", p.TextIn(item["text"], self.cfg.get("user"), "t-%d" % self.texts)),
            )
        elif "sensor" in item and self.sensor:
            self.sensor.event(item["sensor"], item.get("data") or {})
        elif "send" in item:  # host inbox only: a frame as given (tests of fayd's answers)
            self.send(item["send"], p.encode(item["send"], dict(item.get("body") or {})))
        elif "ptt" in item and self.mic:
            self.mic.ptt(bool(item["ptt"]))
        elif item.get("talk") and self.mic:
            self.mic.talk()

    def step(self):
        now = time.ticks_ms()
        self.link.poll(now)
        for item in self.inputs.poll():
            try:
                self.on_input(item)
            except FwError as exc:
                hw.log("input %r: %s" % (item, exc))
        if self.mic:
            self.mic.tick(now)
        if self.drivers:
            self.drivers.tick(now)
        if self.robot:
            self.robot.tick(now)
        if self.screen:
            self.screen.tick(now)
        self.ota.tick(now)
        if self.link.up:
            if self.sensor:
                self.sensor.replay(now)
            if time.ticks_diff(now, self.last_hb) >= self.hb_ms:
                self.last_hb = now
                self.hb_seq += 1
                up = time.ticks_diff(now, self.started) / 1000
                self.send("heartbeat", p.encode("heartbeat", p.Heartbeat(self.hb_seq, up)))

    def run(self, sleep_ms=5):
        hw.record("boot", device=self.id, fw=self.fw, roles=self.roles)
        while True:
            self.step()
            time.sleep_ms(sleep_ms)


def _level(value, name):
    """A 0-100 integer argument, or FwError (an error frame: malformed)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise FwError("%s must be an integer 0-100, not %r" % (name, value))
    return value
