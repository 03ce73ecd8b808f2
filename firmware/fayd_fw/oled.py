# An SSD1306 screen (128x64, I2C) for the screen role, as in the reference build
# (docs/hardware.md): config "screen": {"driver": "fayd_fw.oled", "size": [128, 64],
# "i2c_id": 0, "sda": 8, "scl": 9, "cols": 12}. It needs MicroPython's ssd1306 module on the
# board (mpremote mip install ssd1306). The reply's text takes the left 96 columns, a small
# face the right 32: its eyes and mouth follow the expression, and the mouth opens with the
# speech's Lips track.

FACE_W = 32
#: expression -> (eye height, eye width, mouth bend: + smiles, - frowns)
LOOKS = {
    "neutral": (6, 4, 0),
    "smile": (6, 4, 2),
    "happy": (4, 5, 3),
    "excited": (8, 5, 3),
    "serious": (2, 5, 0),
    "sad": (4, 4, -2),
    "surprised": (9, 6, 0),
    "curious": (7, 4, 1),
    "attentive": (8, 4, 0),
}


def make(cfg):
    import ssd1306
    from machine import I2C, Pin

    w, h = cfg.get("size", [128, 64])
    i2c = I2C(cfg.get("i2c_id", 0), sda=Pin(cfg.get("sda", 8)), scl=Pin(cfg.get("scl", 9)))
    return Oled(ssd1306.SSD1306_I2C(w, h, i2c, addr=cfg.get("addr", 0x3C)), w, h)


class Oled:
    """What hw.Display drives (fill/text/show, contrast, face, mouth) on a framebuf panel
    with show() and contrast() (the ssd1306 module's SSD1306_I2C)."""

    def __init__(self, panel, w, h):
        self.panel = panel
        self.w = w
        self.h = h
        self.expression = "neutral"
        self.opening = 0.0

    def fill(self, c):
        self.panel.fill(c)

    def text(self, s, x, y, c):
        self.panel.text(s, x, y, c)

    def show(self):
        self._draw_face()
        self.panel.show()

    def contrast(self, level):
        self.panel.contrast(level)

    def face(self, expression):
        self.expression = expression
        self.show()

    def mouth(self, opening):
        self.opening = opening
        self.show()

    def _draw_face(self):
        fb = self.panel
        x0 = self.w - FACE_W
        cx = x0 + FACE_W // 2
        cy = self.h // 2
        eye_h, eye_w, bend = LOOKS.get(self.expression, LOOKS["neutral"])
        fb.fill_rect(x0, 0, FACE_W, self.h, 0)
        for ex in (cx - 8, cx + 8):
            fb.fill_rect(ex - eye_w // 2, cy - 10 - eye_h // 2, eye_w, eye_h, 1)
        my = cy + 12
        if self.opening > 0:  # speaking: an open mouth, as tall as the Lips track says
            tall = max(2, int(self.opening * 10))
            fb.fill_rect(cx - 6, my - tall // 2, 12, tall, 1)
        else:  # at rest: a line bent by the expression
            fb.line(cx - 8, my - bend, cx, my, 1)
            fb.line(cx, my, cx + 8, my - bend, 1)
