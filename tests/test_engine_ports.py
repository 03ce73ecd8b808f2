"""Every engine backend has what its Protocol promises (fayd.speech.ports, fayd.llm.ports),
and so has the memory (fayd.memory.port, the re-embedding pass's Reembeddable):
the same method names taking the same parameters, and the same attributes. Checked on the
classes, so no model is loaded."""

from __future__ import annotations

import inspect

import pytest

from fayd.llm.local import LocalLlm
from fayd.llm.ports import ChatLlm, TokenCounting
from fayd.llm.remote import RemoteLlm
from fayd.memory.port import MemoryPort
from fayd.memory.reembed import Reembeddable
from fayd.memory.service import Memory
from fayd.speech.asr import WhisperAsr
from fayd.speech.asr_languages import LanguageAsr
from fayd.speech.asr_sherpa import SherpaAsr
from fayd.speech.ports import Asr, Tts, Vad
from fayd.speech.tts import PiperTts
from fayd.speech.tts_sherpa import SherpaTts
from fayd.speech.vad import SileroVad

PAIRS = [
    (Asr, WhisperAsr),
    (Asr, SherpaAsr),
    (Asr, LanguageAsr),
    (Tts, PiperTts),
    (Tts, SherpaTts),
    (Vad, SileroVad),
    (ChatLlm, LocalLlm),
    (ChatLlm, RemoteLlm),
    (TokenCounting, LocalLlm),
    (MemoryPort, Memory),
    (Reembeddable, Memory),
]


def members(protocol: type) -> tuple[dict[str, object], set[str]]:
    """The protocol's methods and properties (name → object), and its plain attributes."""
    own = {
        name: value
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }
    attributes = {n for n in getattr(protocol, "__annotations__", {}) if not n.startswith("_")}
    return own, attributes


def parameters(function: object) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize(("protocol", "engine"), PAIRS, ids=lambda x: x.__name__)
def test_engine_has_what_its_protocol_promises(protocol: type, engine: type) -> None:
    methods, attributes = members(protocol)
    assert methods or attributes
    for name, promised in methods.items():
        real = inspect.getattr_static(engine, name, None)
        assert real is not None, f"{engine.__name__} has no {name}"
        if isinstance(promised, property):
            assert isinstance(real, property), f"{engine.__name__}.{name} is not a property"
            continue
        assert callable(real), f"{engine.__name__}.{name} is not a method"
        assert parameters(real) == parameters(promised), f"{engine.__name__}.{name}"
    for name in attributes:
        # Set in __init__ (no model here): declared on the class.
        declared = any(name in getattr(k, "__annotations__", {}) for k in engine.__mro__)
        assert declared or hasattr(engine, name), f"{engine.__name__} declares no {name}"
