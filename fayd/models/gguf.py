"""Reading a GGUF file's header and tensor table, to tell a whole llama.cpp model from a
damaged one without loading it (``fayd models check --verify``, and before the daemon
gives a user's own model to llama.cpp).

Checked: the magic and version, every metadata entry parses, every tensor's shape and
type are sane, and each tensor's data lies inside the file (a truncated copy, the usual
damage, ends before its last tensor). The weights themselves have no checksum in GGUF.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from fayd.errors import ModelError

MAGIC = b"GGUF"
#: Metadata value types (gguf.h): type → struct format of a scalar ("" = not a scalar).
SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
STRING, ARRAY = 8, 9
#: ggml tensor types: type → (elements per block, bytes per block). A type not listed is
#: newer than this table: its size is not checked, only that it starts inside the file.
BLOCKS = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
    14: (256, 210), 15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98),
    19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1),
    25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17),
}  # fmt: skip
MAX_DIMS = 4  # GGML_MAX_DIMS
DEFAULT_ALIGNMENT = 32


class _Reader:
    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f, self.size = f, size

    def take(self, fmt: str) -> int | float | bool:
        raw = self.f.read(struct.calcsize(fmt))
        if len(raw) != struct.calcsize(fmt):
            raise ModelError("the file ends inside its header")
        return struct.unpack("<" + fmt, raw)[0]

    def count(self, what: str) -> int:
        n = int(self.take("Q"))
        if n > self.size:  # each item takes at least a byte: more than the file holds
            raise ModelError(
                f"the file is cut short or damaged (its header counts {n} {what} items)"
            )
        return n

    def string(self) -> str:
        n = self.count("string length")
        raw = self.f.read(n)
        if len(raw) != n:
            raise ModelError("the file ends inside its header")
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int) -> object:
        if kind in SCALARS:
            return self.take(SCALARS[kind])
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item, n = int(self.take("I")), self.count("array")
            if item in SCALARS:  # a block of scalars: skipped, not unpacked one by one
                width = struct.calcsize(SCALARS[item])
                self.f.seek(width * n, 1)
                if self.f.tell() > self.size:
                    raise ModelError("the file ends inside its header")
                return None
            for _ in range(n):
                self.value(item)
            return None
        raise ModelError(f"unknown metadata type {kind}")


def check_gguf(path: str | Path) -> str:
    """Raise ModelError naming ``path`` and what is wrong unless it is a whole GGUF file;
    returns a short description ("GGUF v3, 272 tensors") when it is."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            size = path.stat().st_size
            return _check(_Reader(f, size), size)
    except ModelError as exc:
        raise ModelError(f"{path} is not a usable GGUF model: {exc}") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read it: {exc.strerror}") from exc


def _check(r: _Reader, size: int) -> str:
    if r.f.read(4) != MAGIC:
        raise ModelError("no GGUF header (it does not start with 'GGUF')")
    version = int(r.take("I"))
    if version not in (2, 3):
        raise ModelError(f"GGUF version {version} (llama.cpp reads 2 and 3)")
    tensors, entries = r.count("tensor"), r.count("metadata")
    alignment = DEFAULT_ALIGNMENT
    for _ in range(entries):
        key, kind = r.string(), int(r.take("I"))
        found = r.value(kind)
        if key == "general.alignment" and isinstance(found, int) and found > 0:
            alignment = found
    table = []
    for _ in range(tensors):
        name, dims = r.string(), int(r.take("I"))
        if not 1 <= dims <= MAX_DIMS:
            raise ModelError(f"tensor {name!r} has {dims} dimensions")
        shape = [int(r.take("Q")) for _ in range(dims)]
        table.append((name, shape, int(r.take("I")), int(r.take("Q"))))
    start = -(-r.f.tell() // alignment) * alignment  # the data begins aligned
    for name, shape, kind, offset in table:
        elements = 1
        for n in shape:
            elements *= n
        block, width = BLOCKS.get(kind, (1, 0))
        if elements % block:
            raise ModelError(f"tensor {name!r}: {elements} values do not fill its blocks")
        end = start + offset + elements // block * width
        if offset % alignment or end > size or start + offset >= size:
            raise ModelError(
                f"tensor {name!r} lies beyond the end of the file ({size} bytes):"
                " the file is cut short or damaged"
            )
    return f"GGUF v{version}, {tensors} tensors"
