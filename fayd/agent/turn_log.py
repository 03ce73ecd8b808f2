"""A turn's one INFO line: its number, device, user, intent, lengths and timings, never its
words (fayd.logwords). Logged under fayd.agent.conversation, where turns run, so that a
journal filter on it keeps working."""

from __future__ import annotations

import logging
import time

from fayd.agent.turn import Turn
from fayd.logwords import words

log = logging.getLogger("fayd.agent.conversation")

#: The timings a turn's log line shows, by their short names.
_SHOWN_TIMINGS = {
    "room_wait_ms": "waited for a device's turn",
    "endpoint_wait_ms": "pause",
    "asr_ms": "asr",
    "understood_ms": "understood",
    "llm_first_sentence_ms": "first sentence",
    "first_audio_ms": "first audio",
}


def log_turn(turn: Turn, ended: str = "") -> None:
    """One INFO line a turn: its number, device, user, intent, lengths and timings, never
    its words (fayd.logwords); those go to a DEBUG line, shown only with ``[log] words``."""
    decision = turn.decision
    how = (
        f"{decision['intent']} via {decision['via']} {decision['score']:.2f}"
        if decision
        else "no router"
    )
    took = round((time.monotonic() - turn.started) * 1000)
    said = len(turn.sentences)
    steps = ", ".join(
        f"{name} {turn.timings[key]:.0f}"
        for key, name in _SHOWN_TIMINGS.items()
        if key in turn.timings
    )
    log.info(
        "turn %d on %s for %s (%s): %s; %d chars → %d chars in %s; %d ms%s%s",
        turn.id,
        turn.device,
        turn.user,
        turn.source,
        how,
        len(turn.question),
        len(turn.answer),
        f"{said} sentence{'' if said == 1 else 's'}",
        took,
        f" ({steps})" if steps else "",
        f"; {ended}" if ended else "",
    )
    log.debug("turn %d: heard %s, said %s", turn.id, words(turn.question), words(turn.answer))
