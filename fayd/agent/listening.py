"""Hearing a device's utterance: speech recognition on a worker thread, one device at a time
per model, and speculation: a provisional utterance is transcribed while the VAD still waits
out the silence that will end it, and the final one reuses that text when nothing was said
since (ASR then costs nothing after the hangover)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from fayd.logwords import words
from fayd.speech import Asr, SpeechSegment

log = logging.getLogger(__name__)

#: Said (and shown) when speech recognition is missing or fails: never silence.
NOT_HEARD = "I couldn't hear that: my speech recognition isn't working (fayd status says why)."


class NotHeard(Exception):
    """Speech arrived but could not be recognised (no ASR model, or it failed): the
    device is told so in words (NOT_HEARD) instead of getting nothing."""


class Gates:
    """One FIFO lock per model: devices take turns in arrival order (asyncio.Lock wakes its
    waiters first-come first-served), so a busy device cannot starve another."""

    def __init__(self) -> None:
        self.asr = asyncio.Lock()
        self.llm = asyncio.Lock()


def _quiet(task: asyncio.Task[Any]) -> None:
    """Retrieve a speculation's outcome so an unused failure is not reported as lost."""
    if not task.cancelled():
        task.exception()


class Transcriber:
    """One device's speech recognition."""

    def __init__(
        self,
        device: str,
        asr: Asr | None,
        gates: Gates,
        language: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.device = device
        self.asr = asr
        self.gates = gates
        #: The language the device's speech is heard in (None: the household's), asked
        #: at each utterance so a changed setting holds from the next one.
        self.language = language
        self._speculation: tuple[SpeechSegment, asyncio.Task[tuple[str, float]]] | None = None
        #: Final utterances whose text came from a speculative transcription.
        self.speculated = 0

    def speculate(self, early: SpeechSegment) -> asyncio.Task[tuple[str, float]] | None:
        """Transcribe a provisional utterance now, only when ASR is idle: speculation must
        never delay a real turn. The transcription's task (None: not started)."""
        if self.asr is None or self.gates.asr.locked():
            return None
        if self._speculation is not None:
            self._speculation[1].cancel()
        task = asyncio.create_task(self.transcribe(early.samples))
        task.add_done_callback(_quiet)
        self._speculation = (early, task)
        return task

    async def heard(self, segment: SpeechSegment) -> tuple[str, float]:
        """The final utterance's text: the speculation's when it covered the same speech
        (ASR time then counts only what was left to wait), else a fresh transcription."""
        speculation, self._speculation = self._speculation, None
        if speculation is not None:
            early, task = speculation
            if early.vad_start == segment.vad_start and segment.cut <= early.cut:
                loop = asyncio.get_running_loop()
                started = loop.time()
                try:
                    text, _ = await task
                    self.speculated += 1
                    return text, round((loop.time() - started) * 1000, 1)
                except Exception:  # cancelled or failed: transcribe as usual
                    pass
            else:
                task.cancel()
        return await self.transcribe(segment.samples)

    async def transcribe(self, samples: np.ndarray) -> tuple[str, float]:
        """The utterance's text and how long ASR took (ms, waiting for the model included)."""
        if self.asr is None:
            log.error("an utterance arrived but the ASR model is missing")
            raise NotHeard("the ASR model is missing")
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with self.gates.asr:
            try:
                text = await asyncio.to_thread(self.asr.transcribe, samples, self.language())
            except Exception as exc:  # a broken model: the device hears why, not nothing
                log.error("speech recognition failed: %s: %s", type(exc).__name__, exc)
                raise NotHeard(f"speech recognition failed: {exc}") from exc
        took = round((loop.time() - started) * 1000, 1)
        log.info("device %s heard %d chars in %.0f ms", self.device, len(text.strip()), took)
        log.debug("device %s heard %s", self.device, words(text.strip()))
        return text.strip(), took
