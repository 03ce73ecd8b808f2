# Robot role: Action (behavior, intensity, priority) -> a motion template: keyframes per
# servo channel, [offset from the idle pose in degrees, duration in ms], authored at
# intensity 1.0 and scaled by the Action's intensity. A new action pre-empts the running one
# when its priority is at least as high; a lower one is dropped. Per-servo angle and speed
# limits (hw.Servo), an idle pose, and a safe stop (back to idle, slowly) when the link is
# lost. Templates: motions.json beside this file, overridden per behavior by the robot's
# own table (config "robot": {"motions": "my_motions.json"} or inline "templates").
import json

from fayd_fw import hw


def load_templates(cfg, base_dir):
    with open(base_dir + "/motions.json") as f:
        table = json.load(f)["behaviors"]
    rc = cfg.get("robot", {})
    own = rc.get("motions")
    if own:
        with open(own) as f:
            table.update(json.load(f).get("behaviors", {}))
    table.update(rc.get("templates", {}))
    return table


def scaled(template, servos, intensity):
    """{channel: [(angle, ms), ...]} for one action, before speed limits: idle + offset x
    intensity, clamped to the servo's range. Channels this robot lacks are skipped."""
    out = {}
    k = max(0.0, min(1.0, intensity))
    for ch in template:
        s = servos.get(ch)
        if s is None:
            continue
        idle = s.idle
        out[ch] = [(s.servo.clamp(round(idle + off * k, 1)), ms) for off, ms in template[ch]]
    return out


class _Channel:
    def __init__(self, name, servo, idle):
        self.name = name
        self.servo = servo
        self.idle = idle


class Robot:
    def __init__(self, cfg, base_dir):
        rc = cfg.get("robot", {})
        self.servos = {}
        for name in rc.get("servos", {}):
            sc = rc["servos"][name]
            self.servos[name] = _Channel(name, hw.Servo(name, sc), sc.get("idle", 90))
        self.templates = load_templates(cfg, base_dir)
        self.idle_ms = rc.get("idle_ms", 400)
        self.safe_speed = rc.get("safe_speed", 60)  # deg/s when the link is lost
        self.current = None  # (behavior, priority, id)
        self.plan = {}  # channel -> list of (angle, ms) still to do
        self.motions = 0
        self.returning = False

    def caps(self):
        return {"servos": list(self.servos), "behaviors": sorted(self.templates)}

    def act(self, action):
        """action = (code, behavior, affect, intensity, priority) from protocol.Action."""
        code, behavior, _affect, intensity, priority = action
        tpl = self.templates.get(behavior)
        if tpl is None:
            hw.record("robot", ignored=behavior, why="no template")
            return False
        if self.current is not None and priority < self.current[1]:
            hw.record(
                "robot",
                ignored=behavior,
                why="lower priority",
                priority=priority,
                running=self.current[0],
            )
            return False
        if self.current is not None:
            hw.record("robot", preempted=self.current[0], by=behavior)
        self.motions += 1
        self.current = (behavior, priority, self.motions)
        self.returning = False
        self.plan = scaled(tpl, self.servos, intensity)
        hw.record(
            "robot",
            motion=self.motions,
            behavior=behavior,
            code=code,
            intensity=intensity,
            priority=priority,
        )
        for ch in self.plan:
            self._next(ch)
        return True

    def _next(self, ch):
        steps = self.plan.get(ch)
        if steps:
            angle, ms = steps.pop(0)
            self.servos[ch].servo.goto(angle, ms, self.motions)

    def tick(self, now):
        busy = False
        for ch in self.servos:
            s = self.servos[ch].servo
            s.tick(now)
            if not s.done():
                busy = True
            elif self.plan.get(ch):
                self._next(ch)
                busy = True
        if busy or (self.current is None and not self.returning):
            return
        if self.current is not None:  # the motion is over: back to the idle pose
            hw.record("robot", done=self.current[0], motion=self.current[2])
            self.current = None
            self.returning = True
            self.plan = {}
            for ch in self.servos:
                c = self.servos[ch]
                c.servo.goto(c.idle, self.idle_ms, "idle")
        else:
            self.returning = False
            hw.record("robot", idle=True)

    def safe_stop(self):
        """Link lost: stop the motion where it is, then go to the idle pose slowly."""
        self.plan = {}
        self.current = None
        self.returning = True
        hw.record("robot", safe_stop=True)
        for ch in self.servos:
            c = self.servos[ch]
            c.servo.hold()
            ms = int(abs(c.idle - c.servo.angle) * 1000 / self.safe_speed)
            c.servo.goto(c.idle, ms, "safe")
