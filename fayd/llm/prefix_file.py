"""The LLM's read prompt prefix (persona, examples) kept on disk between starts.

Reading the prefix is the dearest part of a start (1.5 s of a 5 s start here, several
seconds on a busy board); its KV cache is a few MB. The file says what it was made from
(the model file, llama.cpp's version, the context size, the prompt) and carries a checksum:
anything else, or a damaged file, is not used, and the prefix is read again."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def identity(model: Path, n_ctx: int, prompt: Any) -> dict[str, Any]:
    """What a kept cache must match to be used: the model file as it is on disk, the
    engine's version and context, and the prompt it read."""
    import llama_cpp

    stat = model.stat()
    digest = hashlib.sha256(json.dumps(prompt, sort_keys=True).encode()).hexdigest()
    return {
        "model": str(model),
        "model_size": stat.st_size,
        "model_mtime_ns": stat.st_mtime_ns,
        "llama_cpp": llama_cpp.__version__,
        "n_ctx": n_ctx,
        "prompt": digest,
    }


def write(path: Path, made_from: dict[str, Any], tokens: list[int], data: bytes) -> None:
    """Atomically: a JSON header line, then the cache's bytes."""
    header = {**made_from, "tokens": tokens, "bytes": len(data)}
    header["sha256"] = hashlib.sha256(data).hexdigest()
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    try:
        with part.open("wb") as f:
            f.write(json.dumps(header).encode() + b"\n")
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        part.replace(path)
    except OSError:
        part.unlink(missing_ok=True)  # a full disk keeps no half file
        raise


def read(path: Path, made_from: dict[str, Any]) -> tuple[list[int], bytes] | None:
    """The kept tokens and cache, if the file was made from the same things and is whole."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("LLM prefix cache %s unreadable (%s): reading the prompt again", path, exc)
        return None
    head, _, data = raw.partition(b"\n")
    try:
        header = json.loads(head)
        same = all(header.get(k) == v for k, v in made_from.items())
        whole = header["bytes"] == len(data)
        whole = whole and header["sha256"] == hashlib.sha256(data).hexdigest()
        tokens = [int(t) for t in header["tokens"]]
    except (ValueError, KeyError, TypeError):
        same = whole = False
    if not same:
        return None  # another model or prompt: made again after this start's warm-up
    if not whole:
        log.warning("LLM prefix cache %s is damaged: reading the prompt again", path)
        return None
    return tokens, data
