"""How often bad frames are answered (docs/protocol.md, *error*): a burst of error frames,
then one a second, so that a device or a board flooding garbage gets a few answers, not one
per frame. A token bucket, plain data: the caller gives the time."""

from __future__ import annotations

import time
from dataclasses import dataclass

#: Error frames answered at once; then one per ERROR_EVERY_S.
ERROR_BURST = 10
ERROR_EVERY_S = 1.0


@dataclass
class ErrorBudget:
    tokens: float = ERROR_BURST
    at: float = 0.0
    #: Bad frames not answered since the last answer (said with the next one).
    suppressed: int = 0

    def take(self, now: float | None = None) -> bool:
        """Whether one more error frame may go now (``now``: time.monotonic())."""
        now = time.monotonic() if now is None else now
        self.tokens = min(ERROR_BURST, self.tokens + (now - self.at) / ERROR_EVERY_S)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.suppressed += 1
        return False
