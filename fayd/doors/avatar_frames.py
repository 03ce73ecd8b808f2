"""fayd's reply frames (the ones it sends a speaker device: fayd.agent.output) as the JSON
frames Fay's avatar frontends read (FAY-FORMATS.md, "Frames to avatar/robot frontends").

The device protocol sends a sentence as a ``human`` audio frame followed by binary PCM
chunks; a frontend wants one ``human`` audio frame whose ``HttpValue`` is a WAV of the
whole sentence. So the chunks are gathered until the sentence is complete (its ``Time``
worth of samples, the stream's end or the reply's next frame) and then the frame goes out.
Plain data in, plain data out: no I/O here besides the audio store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fayd.doors.avatar_audio import AudioStore
from fayd.protocol import AudioChunk, Command, Error, Human, Outgoing

log = logging.getLogger(__name__)

#: Fay's state words in its ``log`` frames, by the language of what was typed (a reply is
#: in the language of its question: fayd.agent.language.text).
STATES = {
    "thinking": {"zh": "思考中...", "en": "Thinking..."},
    "listening": {"zh": "聆听中...", "en": "Listening..."},
}

#: A frame for the frontends, and the audio path its HttpValue/Value will name (None: no
#: audio; each connection prefixes its own base URL, as its Host names the box).
Pushed = tuple[dict[str, Any], str | None]


@dataclass
class _Sentence:
    """A spoken sentence whose PCM is still arriving."""

    frame: Human
    stream: int | None
    pcm: list[bytes] = field(default_factory=list)
    size: int = 0
    rate: int = 0

    def complete(self) -> bool:
        if not self.rate or self.frame.time is None:
            return False
        # Time is rounded to 1 ms: a sentence is whole within that.
        return self.size >= 2 * self.rate * (self.frame.time - 0.001)


class AvatarFrames:
    """One avatar user's reply stream: fayd's frames in, Fay's out through ``push``."""

    def __init__(
        self,
        username: str,
        store: AudioStore,
        push: Callable[[Pushed], None],
        wanted: Callable[[], bool],
    ) -> None:
        self.username = username
        self.store = store
        self.push = push
        #: Whether any frontend of this user wants audio now (else no WAV is kept).
        self.wanted = wanted
        #: "zh" or "en": the language of the user's last typed text.
        self.lang = "en"
        self._sentence: _Sentence | None = None

    def feed(self, frame: Outgoing) -> None:
        if isinstance(frame, AudioChunk):
            self._chunk(frame)
            return
        self._flush()  # the reply moved on: the sentence before is whole
        if isinstance(frame, Human):
            self._human(frame)
        elif isinstance(frame, Error):
            self.push((error_frame(frame.code, frame.message), None))
        elif isinstance(frame, Command) and frame.name == "stop":
            # Not Fay's: a frontend that knows it stops playing (barge-in, "stop").
            data = {"Key": "stop", "Value": str(frame.args.get("reason", ""))}
            self.push(({"Topic": "human", "Data": data, "Username": self.username}, None))
        else:
            log.debug("avatar %s: %s frame not sent to frontends", self.username, frame.KIND)

    def _human(self, frame: Human) -> None:
        if frame.key == "audio" and not frame.is_end:
            self._sentence = _Sentence(frame, frame.stream)
            return
        out = frame.to_dict()
        data = out["Data"]
        data.pop("Stream", None)  # fayd's binary stream: not on this socket
        data.pop("Seq", None)
        if frame.key == "log" and frame.value in STATES:
            data["Value"] = STATES[frame.value][self.lang]
        if frame.key == "audio":  # the reply's end: no audio
            data.update(Value="", HttpValue="", Time=0)
        out["Username"] = self.username
        self.push((out, None))

    def _chunk(self, chunk: AudioChunk) -> None:
        sentence = self._sentence
        if sentence is None or chunk.stream != sentence.stream:
            return  # a chime before the first sentence, or an end mark: no sentence to carry
        sentence.pcm.append(chunk.pcm)
        sentence.size += len(chunk.pcm)
        sentence.rate = chunk.rate
        if chunk.end or sentence.complete():
            self._flush()

    def _flush(self) -> None:
        sentence, self._sentence = self._sentence, None
        if sentence is None or not sentence.size:
            return
        if not self.wanted():
            return  # nobody left to play it: keep no WAV
        path = self.store.put(b"".join(sentence.pcm), sentence.rate)
        out = sentence.frame.to_dict()
        data = out["Data"]
        data.pop("Stream", None)
        data.pop("Seq", None)
        data["Time"] = round(sentence.size / 2 / sentence.rate, 3)
        out["Username"] = self.username
        self.push((out, path))


def error_frame(code: str, message: str) -> dict[str, Any]:
    """fayd's own frame for a frontend: what went wrong (Fay frontends ignore the topic)."""
    return {"Topic": "error", "Data": {"Code": code, "Message": message}}
