"""Speech: audio helpers, VAD, ASR and TTS, and the Protocols their callers rely on (Asr,
Tts, Vad, WakeDetector, OnsetDetector). Model runtimes are imported only when a model object
is built, so importing this package stays cheap."""

from fayd.speech.asr import WhisperAsr
from fayd.speech.audio import (
    VISEMES,
    float_to_pcm16,
    lips_track,
    pcm16_to_float,
    read_wav,
    resample,
    write_wav,
)
from fayd.speech.ports import Asr, Ending, OnsetDetector, Tts, Vad, WakeDetector
from fayd.speech.tts import PiperTts
from fayd.speech.vad import SileroVad, SpeechSegment, validate_vad_file

__all__ = [
    "VISEMES",
    "Asr",
    "Ending",
    "OnsetDetector",
    "PiperTts",
    "SileroVad",
    "SpeechSegment",
    "Tts",
    "Vad",
    "WakeDetector",
    "WhisperAsr",
    "float_to_pcm16",
    "lips_track",
    "pcm16_to_float",
    "read_wav",
    "resample",
    "validate_vad_file",
    "write_wav",
]
