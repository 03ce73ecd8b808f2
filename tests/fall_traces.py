"""Accelerometer traces (g, 100 Hz, a pendant worn on the chest: its Y axis points up while
the wearer stands) for the fall detector's tests. Shaped after published fall-detection
recordings (e.g. Bourke et al. 2007, Kangas et al. 2008: trunk |a| dips to ~0.3-0.6 g while
the body goes down, peaks at 2-6 g on impact, then rests at 1 g in a new orientation), with
seeded noise: the same trace every run."""

from __future__ import annotations

import math
import random

HZ = 100
UPRIGHT = (0.0, 1.0, 0.0)
LYING = (0.1, 0.15, 0.98)


class Trace:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.samples: list[list[float]] = []

    def add(self, direction: tuple[float, float, float], g: float, noise: float) -> None:
        norm = math.sqrt(sum(a * a for a in direction))
        self.samples.append([round(a / norm * g + self.rng.gauss(0, noise), 4) for a in direction])

    def rest(self, direction: tuple[float, float, float], seconds: float, noise=0.02) -> Trace:
        for k in range(int(seconds * HZ)):
            breath = 0.015 * math.sin(2 * math.pi * 0.25 * k / HZ)  # breathing, 15 a minute
            self.add(direction, 1 + breath, noise)
        return self

    def going_down(self, seconds: float, low_g: float, tilt_deg: float) -> Trace:
        """The body going down: |a| falls to ``low_g`` in 80 ms and stays there while the
        trunk turns ``tilt_deg`` forward."""
        n = int(seconds * HZ)
        for k in range(n):
            th = math.radians(tilt_deg * k / n)
            g = 1 - (1 - low_g) * min(1.0, k / 8)
            self.add((0.0, math.cos(th), math.sin(th)), g, 0.03)
        return self

    def impact(self, peaks: list[float], direction: tuple[float, float, float]) -> Trace:
        for g in peaks:
            self.add(direction, g, 0.05)
        return self

    def jostle(self, seconds: float, direction: tuple[float, float, float], spread: float):
        for _ in range(int(seconds * HZ)):
            wobble = (direction[0] + self.rng.gauss(0, 0.3), direction[1], direction[2])
            self.add(wobble, 1 + self.rng.gauss(0, spread), 0.02)
        return self


def real_fall(seed: int = 1) -> list[list[float]]:
    """Standing, 0.5 s going down (0.4 g, turning 80°), a 3.6 g impact, a roll, lying."""
    t = Trace(seed).rest(UPRIGHT, 3).going_down(0.5, 0.4, 80)
    t.impact([1.5, 2.6, 3.6, 3.1, 2.0, 1.4, 1.1, 0.9], (0.0, 0.2, 1.0))
    return t.jostle(0.5, (0.0, 0.2, 1.0), 0.15).rest(LYING, 6, 0.01).samples


def fall_then_gets_up(seed: int = 2) -> list[list[float]]:
    """The same fall, but 2 s later the person gets up and stands."""
    t = Trace(seed).rest(UPRIGHT, 3).going_down(0.5, 0.4, 80)
    t.impact([1.5, 2.6, 3.6, 3.1, 2.0, 1.4, 1.1, 0.9], (0.0, 0.2, 1.0))
    t.jostle(0.5, (0.0, 0.2, 1.0), 0.15).rest(LYING, 2, 0.01)
    return t.jostle(2, (0.0, 1.0, 0.5), 0.4).rest(UPRIGHT, 5).samples


def sitting_down_hard(seed: int = 3) -> list[list[float]]:
    """Dropping onto a chair: 0.35 s at 0.5 g, a 2.9 g bump, then sitting upright (20°)."""
    t = Trace(seed).rest(UPRIGHT, 3).going_down(0.35, 0.5, 20)
    seat = (0.0, math.cos(math.radians(20)), math.sin(math.radians(20)))
    t.impact([1.6, 2.4, 2.9, 2.2, 1.5, 1.1], seat)
    return t.jostle(0.5, seat, 0.15).rest(seat, 6).samples


def dropped_on_table(seed: int = 4) -> list[list[float]]:
    """The device let go 13 cm above a table: in the hand, 160 ms of true free fall, a hard
    8 g clack (the range's end), a bounce, then lying flat and dead still."""
    t = Trace(seed)
    for k in range(300):  # held in a hand: tilted, moving a little
        wobble = 0.1 * math.sin(2 * math.pi * 0.7 * k / HZ)
        t.add((0.3 + wobble, 0.9, 0.3), 1 + t.rng.gauss(0, 0.06), 0.02)
    for _ in range(16):
        t.add((0.2, 0.3, 0.9), 0.03, 0.01)
    t.impact([7.99, 0.4, 0.05, 0.05, 0.05, 2.5, 0.8], (0.0, 0.0, 1.0))
    t.jostle(0.2, (0.0, 0.0, 1.0), 0.1)
    for _ in range(600):
        t.add((0.0, 0.0, 1.0), 1.0, 0.004)
    return t.samples


def walking(seed: int = 5, seconds: float = 30) -> list[list[float]]:
    """1.8 steps a second: |a| swinging 0.55-1.45 g (under 0.6 g for ~80 ms a step) with a
    heel strike at each step."""
    t = Trace(seed)
    f = 1.8
    for k in range(int(seconds * HZ)):
        s = k / HZ
        phase = (s * f) % 1.0
        heel = 0.5 * math.exp(-(((phase - 0.1) / 0.03) ** 2))
        up = 1 + 0.45 * math.sin(2 * math.pi * f * s) + heel
        side = 0.15 * math.sin(math.pi * f * s)
        t.samples.append([round(side + t.rng.gauss(0, 0.05), 4), round(up, 4), 0.05])
    return t.samples
