# Screen role: the reply as wrapped text, affect -> an expression, the Lips track -> mouth.
import time

from fayd_fw import hw

#: Action affect (fayd/agent/action_rules.csv) -> the face the screen draws.
EXPRESSIONS = {
    "neutral": "neutral",
    "smile": "smile",
    "warm": "smile",
    "happy": "happy",
    "excited": "excited",
    "serious": "serious",
    "sad": "sad",
    "sorry": "sad",
    "surprised": "surprised",
    "curious": "curious",
    "attentive": "attentive",
}

#: fayd's state (a human frame's Key "log": Value) -> the face that shows it.
STATES = {"listening": "attentive", "thinking": "curious"}


def wrap(text, cols):
    """Greedy word wrap to ``cols`` characters; words longer than a line are split."""
    lines = []
    line = ""
    for word in text.split():
        while len(word) > cols:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:cols])
            word = word[cols:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= cols:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


class Screen:
    def __init__(self, cfg):
        sc = cfg.get("screen", {})
        self.display = hw.Display(sc)
        self.cols = sc.get("cols") or self.display.w // 8
        self.rows = sc.get("rows") or self.display.h // 10
        self.expressions = dict(EXPRESSIONS)
        self.expressions.update(sc.get("expressions", {}))
        self.reply = ""
        self.face = None
        self.lips = None  # (list of (ms, open), t0)
        self.mouth = 0.0
        self.display.face("neutral")

    def caps(self):
        return {"screen": [self.display.w, self.display.h]}

    def show_text(self, text, first):
        self.reply = text if first else (self.reply + " " + text).strip()
        lines = wrap(self.reply, self.cols)
        self.display.text(lines[-self.rows :])

    def affect(self, affect):
        face = self.expressions.get(affect, "neutral")
        if face != self.face:
            self.face = face
            self.display.face(face)

    def state(self, value):
        """fayd is listening or thinking: a face says so (the reply's affect replaces it)."""
        face = STATES.get(value)
        if face is not None and face != self.face:
            self.face = face
            self.display.face(face)

    def lip_track(self, lips):
        track = []
        for e in lips:
            if isinstance(e, dict):
                track.append((e.get("Time", 0), e.get("Open", 0.0)))
        if track:
            self.lips = (track, time.ticks_ms())

    def tick(self, now):
        if self.lips is None:
            return
        track, t0 = self.lips
        el = time.ticks_diff(now, t0)
        opening = 0.0
        if el <= track[-1][0] + 40:
            for ms, o in track:
                if ms > el:
                    break
                opening = o
        else:
            self.lips = None
        opening = round(opening, 1)
        if opening != self.mouth:
            self.mouth = opening
            self.display.mouth(opening)

    def idle(self):
        self.lips = None
        if self.mouth:
            self.mouth = 0.0
            self.display.mouth(0.0)
