"""The models a user points fayd at instead of the defaults (their own GGUF, Piper voice,
wake word…), checked before the daemon starts and by ``fayd models check``.

A wrong path is the user's to fix: it stops fayd, named with its setting and where that
came from. A default model that is simply not installed only gets advice
(``fayd models install``), and fayd runs without it.
"""

from __future__ import annotations

from pathlib import Path

from fayd.config import Config
from fayd.errors import ModelMissing
from fayd.models.manifest import Manifest, load_manifest, resolve

#: The wake words bundled with pyopen-wakeword 1.1.0: a name, not a file (fayd.speech.wake).
BUILTIN_WAKE_WORDS = ("hey_jarvis", "alexa", "hey_mycroft", "hey_rhasspy", "okay_nabu")
#: Files that go with a model but have a setting of their own.
COMPANIONS = {"tts": "speech.tts_config"}


def value(cfg: Config, key: str) -> str:
    section, name = key.split(".", 1)
    return str(getattr(getattr(cfg, section), name))


def own_models(cfg: Config, manifest: Manifest | None = None) -> dict[str, str]:
    """role → the path of the user's own model, for the roles where one is set."""
    manifest = manifest or load_manifest()
    found = {}
    for role, spec in manifest.roles.items():
        path = value(cfg, spec.setting) if spec.setting else ""
        if not path or (role == "llm" and cfg.llm.url):  # a server replaces the file
            continue
        if role == "wake" and path in BUILTIN_WAKE_WORDS:  # a name, not a file
            continue
        found[role] = path
    return found


def user_file_problems(cfg: Config, manifest: Manifest | None = None) -> dict[str, str]:
    """role → what is wrong with the user's own model, one line naming the setting."""
    manifest = manifest or load_manifest()
    problems = {}
    for role, path in own_models(cfg, manifest).items():
        key = manifest.role(role).setting
        try:
            resolve(role, path, manifest)
        except ModelMissing as exc:
            if Path(exc.path) != Path(path).expanduser():
                problems[role] = f"{cfg.setting(key)}: needs {exc.path} beside it"
            elif role == "wake" and not path.endswith(".tflite"):
                names = ", ".join(BUILTIN_WAKE_WORDS)
                problems[role] = (
                    f"{cfg.setting(key)}: not a bundled wake word ({names}) nor a .tflite file"
                )
            else:
                problems[role] = f"{cfg.setting(key)}: no such file or folder"
    for role, key in COMPANIONS.items():
        path = value(cfg, key)
        if path and role not in problems and not Path(path).expanduser().is_file():
            problems[role] = f"{cfg.setting(key)}: no such file"
    return problems
