from __future__ import annotations

import numpy as np

from fayd.devices.wake import WakeGate, wake_phrase_pattern


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_strip_the_wake_phrase_whisper_wrote_down() -> None:
    pattern = wake_phrase_pattern("hey_jarvis")
    assert pattern is not None
    for heard in (
        "Hey Jarvis, what time is it?",
        "hey, jarvis! What time is it?",
        "Hey-Jarvis what time is it?",
    ):
        assert pattern.sub("", heard, count=1).lower() == "what time is it?"
    assert (
        pattern.sub("", "What time is it, hey Jarvis?", count=1) == "What time is it, hey Jarvis?"
    )


def test_the_gate_with_the_real_detector(speak) -> None:
    from fayd.speech.wake import WakeWord

    clock = Clock()
    gate = WakeGate(WakeWord("hey_jarvis"), follow_up_s=8.0, clock=clock)
    assert not gate.feed(speak("What time is it?"))
    assert not gate.admits()
    assert gate.feed(speak("Hey Jarvis, what time is it?"))
    assert gate.admits()
    assert gate.without_phrase("Hey Jarvis, what time is it?") == "what time is it?"
    clock.now += 9
    assert not gate.admits()
    assert gate.admits(spoke_until=clock.now - 2)  # a follow-up soon after fayd spoke
    assert not gate.admits(spoke_until=clock.now - 9)
    gate.close()
    assert np.isfinite(gate.detector.score)
