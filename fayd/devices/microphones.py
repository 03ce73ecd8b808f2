"""The devices' microphones: each one's audio frames → its own VAD (utterances, final and
provisional), its wake word, and the onset detector that notices the user talking over
fayd (barge-in). What they hear goes to the Listener (the agent)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fayd.config import SpeechConfig
from fayd.devices.ports import Listener, VoiceModels
from fayd.devices.registry import DeviceState
from fayd.devices.voice import ASR_RATE, VoiceInput
from fayd.devices.wake import WakeGate
from fayd.errors import ProtocolError
from fayd.protocol import AudioChunk
from fayd.speech import Ending, OnsetDetector, SpeechSegment
from fayd.store.devices_records import PAUSE_MS, DeviceSettings

log = logging.getLogger(__name__)

#: After a voice model failed to load, frames are refused this long before it is tried again.
RETRY_LOAD_S = 30.0
#: With semantic endpointing, silence this much longer than any device's longest wait ends
#: an utterance even if nothing else did (a safety net: the agent ends them much sooner).
SAFETY_MS = 1000


@dataclass
class Microphone:
    voice: VoiceInput
    onset: OnsetDetector | None = None
    wake: WakeGate | None = None


class Microphones:
    def __init__(self, models: VoiceModels, speech: SpeechConfig, listener: Listener) -> None:
        self.models = models
        self.speech = speech
        self.listener = listener
        self.mics: dict[str, Microphone] = {}
        #: Voice models change one at a time (a first audio frame, a settings change).
        self._models = asyncio.Lock()
        #: Why the voice models last failed to load, and when to try again.
        self._failure = ""
        self._retry_at = 0.0

    async def audio(self, state: DeviceState, chunk: AudioChunk) -> None:
        """One uplink audio frame of a device (its models are made at its first one)."""
        mic = self.mics.get(state.id) or await self._open(state)
        device, listener = state.id, self.listener
        samples = mic.voice.samples_16k(chunk) if chunk.pcm else None
        speaking = listener.speaking(device)
        if mic.wake is not None:
            # With a wake word, it alone interrupts: the device may hear its own voice.
            if samples is not None and mic.wake.feed(samples) and speaking:
                listener.interrupt(device)
        elif mic.onset is not None:
            if not speaking:
                mic.onset.reset()
            elif samples is not None and mic.onset.accept(samples):
                listener.interrupt(device)
                mic.onset.reset()
        wake = mic.wake
        clean = wake.without_phrase if wake else None
        if mic.voice.resumed():
            listener.resumed(device)
        admitted = wake is None or wake.admits(listener.playing_until(device))
        if admitted and (early := mic.voice.provisional(self._pause_ms)) is not None:
            listener.heard_early(device, early, clean, self._ending(state, early, clean))
        for utterance in mic.voice.accept(chunk, samples):
            if wake is not None and not wake.admits(listener.playing_until(device)):
                log.info("device %s: speech without the wake word, not answered", device)
                continue
            listener.heard(device, utterance, clean)

    @property
    def _semantic(self) -> bool:
        return self.speech.endpointing == "semantic"

    @property
    def _pause_ms(self) -> int:
        """When a pause is offered: the short one semantic endpointing judges at, else the
        usual point to transcribe ahead (ASR hidden in the rest of the hangover)."""
        return self.speech.endpoint_pause_ms if self._semantic else 250

    def _ending(
        self, state: DeviceState, early: SpeechSegment, clean: Callable[[str], str] | None
    ) -> Ending | None:
        """What lets the agent end ``early``'s utterance at its pause (semantic only)."""
        if not self._semantic:
            return None
        device, speech = state.id, self.speech
        longest = state.settings.pause_ms or speech.endpoint_longest_ms

        def end() -> None:
            mic = self.mics.get(device)
            final = mic.voice.cut(early.cut) if mic is not None else None
            if final is not None:
                self.listener.heard(device, final, clean)

        return Ending(end, self._pause_ms, speech.vad_min_silence_ms, longest)

    async def settings_changed(self, state: DeviceState, old: DeviceSettings) -> None:
        """``fayd devices set`` changed barge-in or the wake word of a device."""
        mic = self.mics.get(state.id)
        if mic is None:
            return
        new = state.settings
        async with self._models:
            if old.barge_in != new.barge_in:
                await self._update_onset(state, mic)
            if (old.wake, old.wake_threshold) != (new.wake, new.wake_threshold):
                await self._update_wake(state, mic)

    def status(self, device: str) -> dict[str, Any]:
        mic = self.mics.get(device)
        if mic is None:
            return {}
        out: dict[str, Any] = {"audio": mic.voice.counters()}
        if mic.wake is not None:
            out["wake_detections"] = mic.wake.detections
        return out

    async def _open(self, state: DeviceState) -> Microphone:
        path = self.models.vad_path
        if path is None:
            raise ProtocolError(
                "voice is unavailable: the VAD model is missing or broken (fayd status says why)",
                "no-model",
            )
        if time.monotonic() < self._retry_at:  # it failed to load a moment ago
            raise ProtocolError(f"voice is unavailable: {self._failure}", "no-model")
        try:
            return await self._load(state, path)
        except Exception as exc:  # the file broke after start: refused, not a crashed hub
            self._failure = f"the VAD model failed to load: {exc}"
            self._retry_at = time.monotonic() + RETRY_LOAD_S
            log.error("device %s: %s", state.id, self._failure)
            raise ProtocolError(f"voice is unavailable: {self._failure}", "no-model") from exc

    async def _load(self, state: DeviceState, path: Path) -> Microphone:
        from fayd.speech.vad import SileroVad

        # Loading models takes tens of ms (the first sherpa-onnx import far more): on a
        # worker, so other devices' frames and the loop's timers are not held up meanwhile.
        vad = await asyncio.to_thread(
            SileroVad,
            path,
            sample_rate=ASR_RATE,
            threshold=self.speech.vad_threshold,
            # Semantic endpointing ends utterances itself; the detector's own silence is
            # then only the safety net behind it.
            min_silence_ms=max(self.speech.endpoint_longest_ms, PAUSE_MS[1]) + SAFETY_MS
            if self._semantic
            else self.speech.vad_min_silence_ms,
        )
        async with self._models:
            if state.id in self.mics:  # opened by another frame meanwhile
                return self.mics[state.id]
            mic = Microphone(VoiceInput(state.id, vad))
            await self._update_onset(state, mic)
            await self._update_wake(state, mic)
            self.mics[state.id] = mic
        return mic

    def _barge_in_allowed(self, state: DeviceState) -> bool:
        """The device's setting (``fayd devices set D barge_in=on|off``) decides when set;
        otherwise config says on/off and a device can turn it off for itself (caps
        barge_in=false), e.g. when it has no echo cancellation and would hear its own voice."""
        if state.settings.barge_in is not None:
            return state.settings.barge_in
        caps = state.hello.caps if state.hello else {}
        return self.speech.barge_in and caps.get("barge_in", True) is not False

    async def _update_onset(self, state: DeviceState, mic: Microphone) -> None:
        if not self._barge_in_allowed(state):
            mic.onset = None
        elif mic.onset is None and self.models.vad_path is not None:
            from fayd.speech.vad import SpeechOnset

            path, threshold = self.models.vad_path, self.speech.barge_in_threshold
            mic.onset = await asyncio.to_thread(SpeechOnset, path, threshold)

    def _wake_wanted(self, state: DeviceState) -> bool:
        """The device's setting (``wake=on|off``) decides when set; else config's wake word."""
        if self.models.wake is None:
            return False
        if state.settings.wake is not None:
            return state.settings.wake
        return bool(self.speech.wake_word)

    async def _update_wake(self, state: DeviceState, mic: Microphone) -> None:
        """Give the device a wake word detector, or take it away, as its settings say."""
        new = None
        if self._wake_wanted(state):
            assert self.models.wake is not None
            threshold = state.settings.wake_threshold
            options = {"threshold": threshold} if threshold else {}
            # Built on a worker (TFLite), then swapped in at once: no frame sees no detector.
            new = WakeGate(await asyncio.to_thread(self.models.wake, **options))
        old, mic.wake = mic.wake, new
        if old is not None:
            old.close()
