"""Delivers a reply to a device: `human` text frames for every device with Sentiment and
Action (seed 000), and for speakers each sentence as speech and a lip track (TTS → audio
frames, with Fay's audio `human` frame before it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from fayd.agent.expression import ActionRules, sentiment
from fayd.agent.turn import Turn
from fayd.protocol import Action, AudioChunk, Error, Human, Sender, chunk_pcm
from fayd.speech import Tts
from fayd.speech.audio import float_to_pcm16, lips_track, pcm16_to_float, resample

log = logging.getLogger(__name__)


def _note(hz: float, rate: int, seconds: float = 0.18) -> np.ndarray:
    t = np.arange(int(rate * seconds), dtype=np.float32) / rate
    fade = np.minimum(1.0, np.minimum(t, seconds - t) / 0.02)  # no click at either end
    return (0.4 * np.sin(2 * np.pi * hz * t) * fade).astype(np.float32)


#: Shown once in a reply whose speech could not be made (the TTS model failed).
NO_VOICE = "(I can't speak right now: my voice isn't working; fayd status says why.)"
#: The error frame's words to a speaker whose reply cannot be spoken: a device with no
#: screen cannot show the text, and must not be left in silence.
NO_VOICE_ERROR = "my voice isn't working: the reply cannot be spoken (fayd status says why)"


class ReplyOutput:
    def __init__(
        self,
        sender: Sender,
        tts: Tts | None,
        device: str,
        out_rate: int | None,
        rules: ActionRules | None = None,
        speaker: bool = False,
    ) -> None:
        self.sender = sender
        self.rules = rules
        self.tts = tts
        #: The device has the speaker role: a reply it cannot hear gets an error frame.
        self.speaker = speaker
        self.device = device
        self.out_rate = out_rate
        #: Seconds of speech sent so far.
        self.audio_s = 0.0

    async def deliver(
        self,
        turn: Turn,
        sentences: AsyncIterator[str],
        stream: int,
        action: Action | None = None,
        tone: bool = False,
    ) -> None:
        """Send every sentence as it arrives; close the reply with IsEnd frames. ``action``
        replaces the action rules' for every sentence (an emergency's calm one); ``tone``
        plays a chime first (a timer's alarm)."""
        seq = 0
        index = 0
        speak = self.tts is not None
        mute = self.speaker and not speak  # no voice model: said at once, and in the text
        if mute:
            self.sender.send(self.device, Error("no-model", NO_VOICE_ERROR))
        if speak and tone:
            seq = self._chime(stream)
        try:
            async for sentence in sentences:
                first = index == 0
                feeling = self._expression(sentence)
                if action is not None:
                    feeling["action"] = action
                text = Human(key="text", text=sentence, is_first=first, **feeling)
                self.sender.send(self.device, text)
                if turn.said is not None:
                    turn.said(sentence)
                if speak:
                    try:
                        seq = await self._speak(turn, sentence, stream, seq, first, feeling)
                    except Exception as exc:  # a broken voice: the rest of the reply is text
                        log.error("speech synthesis failed: %s: %s", type(exc).__name__, exc)
                        speak = False
                        self.sender.send(self.device, Error("no-model", NO_VOICE_ERROR))
                        self.sender.send(self.device, Human(key="text", text=NO_VOICE))
                index += 1
            if mute and index:
                self.sender.send(self.device, Human(key="text", text=NO_VOICE))
        finally:
            # Closing frames go out even when the reply was cut short (barge-in, error).
            self.sender.send(self.device, Human(key="text", text="", is_end=True))
            if speak:
                self.sender.send(self.device, Human(key="audio", is_end=True, stream=stream))
                end = AudioChunk(stream, seq, self._rate(), b"", start=seq == 0, end=True)
                self.sender.send(self.device, end)

    def _chime(self, stream: int) -> int:
        """Two short notes (A5, E6) as the first audio of the stream; the next seq."""
        rate = self._rate()
        notes = [_note(880.0, rate), _note(1318.5, rate)]
        pcm = float_to_pcm16(np.concatenate(notes + notes))
        self.audio_s += len(pcm) / 2 / rate
        seq = 0
        for chunk in chunk_pcm(pcm, rate, stream, first_seq=0):
            self.sender.send(self.device, chunk)
            seq = chunk.seq + 1
        return seq

    def _rate(self) -> int:
        assert self.tts is not None  # only a speaker has a rate
        return self.out_rate or self.tts.sample_rate

    def _expression(self, sentence: str) -> dict[str, Any]:
        """Seed 000's semantics for a sentence: Sentiment always, Action when a rule fits."""
        action = self.rules.match(sentence) if self.rules is not None else None
        return {"sentiment": sentiment(sentence), "action": action}

    async def _speak(
        self,
        turn: Turn,
        sentence: str,
        stream: int,
        seq: int,
        first: bool,
        feeling: dict[str, Any],
    ) -> int:
        # The first sentence's speech is what the user waits for: the model pauses between
        # tokens meanwhile (on a 2-core board they would share the CPU; the later
        # sentences are needed only once this one has been heard).
        with turn.hold_model() if first else contextlib.nullcontext():
            pcm, lips = await asyncio.to_thread(self._synthesize, sentence)
        turn.mark("tts_first_chunk_ms")
        if not pcm:
            return seq
        rate = self._rate()
        duration = len(pcm) / 2 / rate
        self.audio_s += duration
        self.sender.send(
            self.device,
            Human(
                key="audio",
                text=sentence,
                is_first=first,
                lips=lips,
                time=round(duration, 3),
                stream=stream,
                seq=seq,
                username=turn.user,
                **feeling,
            ),
        )
        for chunk in chunk_pcm(pcm, rate, stream, first_seq=seq):
            self.sender.send(self.device, chunk)
            seq = chunk.seq + 1
        turn.mark("first_audio_ms")
        return seq

    def _synthesize(self, sentence: str) -> tuple[bytes, tuple[dict, ...]]:
        """Speech and its lip track, on a worker thread (both are CPU work)."""
        pcm = b"".join(self.tts.synthesize(sentence))
        if self.out_rate and self.out_rate != self.tts.sample_rate and pcm:
            samples = resample(pcm16_to_float(pcm), self.tts.sample_rate, self.out_rate)
            pcm = float_to_pcm16(samples)
        return pcm, tuple(lips_track(pcm, self._rate()))
