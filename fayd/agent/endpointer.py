"""When a device's utterance is over (docs/endpointing.md): at each short pause the words so
far are judged (fayd.agent.turn_end) and the utterance is ended at once, after the usual
wait, or after the longest; speech again cancels the wait. A turn whose speaker goes on
talking before its reply is heard is taken back, and the next utterance carries its
audio: one answer to the whole sentence, never two."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fayd.agent.listening import Transcriber
from fayd.agent.turn import Turn
from fayd.agent.turn_end import Verdict
from fayd.speech import Ending, SpeechSegment

log = logging.getLogger(__name__)

#: Quiet put between a taken-back utterance's audio and its continuation.
GAP_S = 0.3


@dataclass
class EarlyEnd:
    """A turn's handle for taking it back; the conversation fills it in as the turn runs."""

    #: What ended the utterance: done, unsure, more (the words judged), silence (no pause
    #: was judged: fixed endpointing, or the detector's own silence).
    verdict: str = "silence"
    #: Silence from the end of speech to the end of the utterance (ms; 0: not measured).
    waited_ms: float = 0.0
    withdrawn: bool = False
    task: asyncio.Task[Any] | None = None
    turn: Turn | None = None

    @property
    def committed(self) -> bool:
        """The reply can no longer be taken back: its first sentence went out (shown, then
        spoken), a skill acted (a timer set twice would be worse than a sentence answered
        early), or the turn is over."""
        turn, task = self.turn, self.task
        if turn is not None and (turn.acted or turn.sentences):
            return True
        return task is not None and task.done()


class Endpointer:
    def __init__(
        self,
        device: str,
        ears: Transcriber,
        judge: Callable[[str], Verdict],
        submit: Callable[[SpeechSegment, Callable[[str], str] | None, EarlyEnd], None],
    ) -> None:
        self.device = device
        self.ears = ears
        self.judge = judge
        self.submit = submit
        self._deciding: asyncio.Task[None] | None = None
        #: The last utterance handed on, and its turn's handle, until speech resumes.
        self._last: tuple[SpeechSegment, EarlyEnd] | None = None
        #: Audio of a taken-back turn, which the next utterance continues.
        self._carried: SpeechSegment | None = None
        self._verdict = ""
        self._paused_at = 0.0
        #: Pauses come with an ending (semantic endpointing): turns can be taken back.
        self._ends = False

    def paused(self, speech: SpeechSegment, ending: Ending | None) -> None:
        """The speaker paused: transcribe ahead and, with ``ending``, decide when it ends."""
        speech = self._joined(speech)
        task = self.ears.speculate(speech)
        self._cancel()
        self._ends = ending is not None
        if ending is not None:
            self._deciding = asyncio.create_task(self._decide(task, ending))

    def resumed(self) -> None:
        """Speech again: no ending now; a turn not yet heard is taken back."""
        self._cancel()
        if self._last is None:
            return
        segment, early = self._last
        self._last = None
        if early.committed or early.withdrawn:
            return
        early.withdrawn = True
        if early.task is not None and not early.task.done():
            early.task.cancel()
        self._carried = segment
        log.info("device %s: the speaker went on; the turn continues", self.device)

    def ended(self, speech: SpeechSegment, clean: Callable[[str], str] | None) -> None:
        """A final utterance (ended here, or by the detector's own silence)."""
        self._cancel()
        speech = self._joined(speech)
        self._carried = None
        early = EarlyEnd(verdict=self._verdict or "silence")
        if self._paused_at:
            early.waited_ms = round((asyncio.get_running_loop().time() - self._paused_at) * 1000)
        self._verdict, self._paused_at = "", 0.0
        self._last = (speech, early) if self._ends else None
        self.submit(speech, clean, early)

    async def _decide(self, heard: asyncio.Task[tuple[str, float]] | None, ending: Ending) -> None:
        loop = asyncio.get_running_loop()
        self._paused_at = loop.time() - ending.silent_ms / 1000
        usual = max(0.0, (ending.usual_ms - ending.silent_ms) / 1000)
        verdict = Verdict.UNSURE
        if heard is not None:
            # Past the usual wait the utterance ends whatever the words: never later than
            # a fixed hangover would because speech recognition was slow.
            done, _ = await asyncio.wait({heard}, timeout=usual)
            if done and not heard.cancelled() and heard.exception() is None:
                try:
                    verdict = self.judge(heard.result()[0])
                except Exception:  # a broken judgement costs the usual wait, not the turn
                    log.exception("device %s: judging a pause failed", self.device)
        longest = max(ending.longest_ms, ending.usual_ms)
        waits = {Verdict.DONE: 0, Verdict.UNSURE: ending.usual_ms, Verdict.MORE: longest}
        left = self._paused_at + waits[verdict] / 1000 - loop.time()
        if left > 0:
            await asyncio.sleep(left)
        self._verdict = verdict.value
        self._deciding = None  # ending() below hands on the utterance: not a cancel
        ending.end()

    def _cancel(self) -> None:
        if self._deciding is not None and self._deciding is not asyncio.current_task():
            self._deciding.cancel()
        self._deciding = None

    def _joined(self, speech: SpeechSegment) -> SpeechSegment:
        """``speech`` after the audio of a taken-back turn, if one is carried."""
        carried = self._carried
        if carried is None:
            return speech
        gap = np.zeros(int(GAP_S * speech.sample_rate), dtype=np.float32)
        return SpeechSegment(
            start_sample=carried.start_sample,
            samples=np.concatenate([carried.samples, gap, speech.samples]),
            sample_rate=speech.sample_rate,
            vad_start=speech.vad_start,
            cut=speech.cut,
        )
