"""The wake word of one device: an utterance is answered only when the wake word came
before it (or inside it: "Hey Jarvis, what time is it?"), or as a follow-up soon after
fayd's last reply. While fayd speaks, the wake word is also how the user interrupts on a
device that would hear its own voice."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import numpy as np

from fayd.speech import WakeDetector

#: How long after the wake word (or after fayd finished speaking) speech is answered
#: without saying the wake word again.
FOLLOW_UP_S = 8.0


class WakeGate:
    def __init__(
        self,
        detector: WakeDetector,
        follow_up_s: float = FOLLOW_UP_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.detector = detector
        self.follow_up_s = follow_up_s
        self.clock = clock
        self.awake_until = 0.0
        self.detections = 0
        self._strip = wake_phrase_pattern(getattr(detector, "name", ""))

    def feed(self, samples: np.ndarray) -> bool:
        """True when the wake word was heard in these samples."""
        self.detector.accept(samples)
        if not self.detector.detected:
            return False
        self.detections += 1
        self.awake_until = self.clock() + self.follow_up_s
        return True

    def admits(self, spoke_until: float = 0.0) -> bool:
        """May an utterance finishing now be answered? (``spoke_until``: when fayd's last
        reply stops playing.)"""
        now = self.clock()
        return now < self.awake_until or now < spoke_until + self.follow_up_s

    def without_phrase(self, text: str) -> str:
        """The question without the wake phrase Whisper also wrote down."""
        return self._strip.sub("", text, count=1).strip() if self._strip else text

    def close(self) -> None:
        self.detector.close()


def wake_phrase_pattern(name: str) -> re.Pattern[str] | None:
    """ "hey_jarvis" → a pattern for a leading "Hey, Jarvis!" / "hey jarvis" (any case and
    punctuation), so the transcript keeps only the question."""
    words = [w for w in re.split(r"[_\W]+", name) if w]
    if not words:
        return None
    return re.compile(r"^\W*" + r"[\s,.!?-]*".join(map(re.escape, words)) + r"\W*", re.I)
