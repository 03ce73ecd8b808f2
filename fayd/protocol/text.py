"""Text from outside fayd, checked once where it enters: device frames (fayd.protocol.codec),
the control API, the MCP tools, imported files and ``fayd devices set``. Plain functions, no
I/O.

Why: JSON's ``"\\udfff"`` escape is valid JSON but decodes to a lone surrogate, a Python
string that no file, socket or SQLite bind can write (UTF-8 has no encoding for it). One such
string deep inside a frame used to crash whoever wrote it: the device hub (every device's
conversation with it), each turn of a poisoned user name, a whole batch of sensor events.
So a string is refused at the edge, with the field named, and everything behind the edge
may assume that every string it holds encodes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from fayd.errors import FaydError

#: A name, an id, a code, a sensor: at most this many characters.
MAX_NAME = 64
#: Text a person typed or a device recognised, an error's message.
MAX_TEXT = 4000
#: The C0 control characters and DEL: never part of a name (a user name is shown in a line of
#: ``fayd devices list``, a log line, a memory tag).
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


class BadText(FaydError, ValueError):
    """A string that fayd cannot keep; ``field`` names where it was (``user``,
    ``data.note``, ``roles[2]``)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = shown(field)  # a path made of a peer's keys: escaped, so it can be written
        self.problem = problem
        super().__init__(f"{self.field} {problem}")


def shown(value: str) -> str:
    """``value`` as it can be written in a message: unchanged when printable, else with its
    control characters and lone surrogates escaped (``\\n``, ``\\udfff``)."""
    return value if value.isprintable() else repr(value)[1:-1]


def surrogate_at(value: str) -> int | None:
    """Where the first character that UTF-8 cannot encode (a lone surrogate) is, or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _unencodable(value: str) -> str | None:
    at = surrogate_at(value)
    if at is None:
        return None
    # Escaped: the message itself must encode, and show the escape the sender wrote.
    return f"has a lone surrogate {shown(value[at])} at character {at} (not UTF-8 text)"


def check_text(field: str, value: Any, max_len: int = MAX_TEXT, *, blank: bool = False) -> str:
    """``value`` as text of at most ``max_len`` characters (non-blank unless ``blank``)."""
    if not isinstance(value, str):
        raise BadText(field, f"must be a string, not {type(value).__name__}")
    problem = _unencodable(value)
    if problem:
        raise BadText(field, problem)
    if len(value) > max_len:
        raise BadText(field, f"is {len(value)} characters long, over {max_len}")
    if not blank and not value.strip():
        raise BadText(field, "is empty")
    return value


def check_name(field: str, value: Any, max_len: int = MAX_NAME, *, blank: bool = False) -> str:
    """A user name, a sensor, a code: 1-``max_len`` characters (or none, when ``blank``),
    no control characters."""
    check_text(field, value, max_len, blank=blank)
    if CONTROL_RE.search(value):
        raise BadText(field, f"must be 1-{max_len} characters without control characters")
    return value


def _strings(value: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    """Every string in a decoded JSON value with its path and whether it is a key;
    iterative, so a value nested as deep as the JSON decoder allows is no RecursionError."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where, item, False
        elif isinstance(item, dict):
            for key, sub in item.items():
                name = f"{where}.{key}" if where else str(key)
                if isinstance(key, str):
                    yield name, key, True
                stack.append((name, sub))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", sub) for i, sub in enumerate(item))


def check_strings(field: str, value: Any) -> Any:
    """``value`` (JSON data: strings, numbers, lists, objects) when every string in it,
    keys too, is text; else BadText naming the first bad one's path (``data.note``)."""
    for where, text, is_key in _strings(value, field):
        problem = _unencodable(text)
        if problem:
            raise BadText(where, f"(its key) {problem}" if is_key else problem)
    return value


def _finite(text: str) -> float:
    """A JSON number as a float; ``1e999`` (infinite) is refused like ``NaN``."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text} is out of range")
    return number


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_object(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object whose every string is text, or ValueError saying why
    (BadText, naming the field, for a lone surrogate: ``"\\udfff"`` is valid JSON but
    nothing can write it). Python's decoder also takes ``NaN``/``Infinity``, which no JSON
    reader after fayd would, and raises RecursionError, not ValueError, for a body nested
    too deeply: both refused here too. Every door's body is read by this."""
    try:
        body = json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError as exc:
        raise ValueError("the body is nested too deeply") from exc
    except ValueError as exc:
        raise ValueError(f"the body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")
    return check_strings("", body)
