"""Fay's tag conventions: the kind enum, the namespaces, normalisation and inheritance."""

from __future__ import annotations

from collections.abc import Iterable

from fayd.memory.errors import BadInput

KIND_ENUM = ["decision", "event", "fact", "rule", "error", "insight", "preference", "observation"]
TAG_NAMESPACES = [
    "kind",
    "source",
    "persistent",
    "domain",
    "strategy",
    "symbol",
    "session",
    "schedule",
    "date",
    "when",
    "speaker",
]
NODE_TYPES = ("observation", "conversation", "reflection")
#: Dropped when a reflection inherits its sources' tags (they describe one moment only).
NOT_INHERITED = ("session:", "date:", "when:", "schedule:", "kind:")

MAX_TAG_LEN = 200


def normalize_tags(
    kind: str | None = "observation",
    source: str | None = None,
    persistent: bool = False,
    extra_tags: Iterable[str] | None = None,
) -> list[str]:
    """Fay's rule: ``kind:<k>`` (an unknown kind becomes ``kind:observation`` plus
    ``kind:unknown:<k>``), ``source:<s>``, ``persistent:true``, extra tags; sorted, unique."""
    if isinstance(extra_tags, str):
        raise BadInput("extra_tags must be a list of strings, not a string")
    tags: set[str] = set()
    k = (kind or "observation").strip().lower()
    if k in KIND_ENUM:
        tags.add(f"kind:{k}")
    else:
        tags.update(("kind:observation", f"kind:unknown:{k}"))
    if source and source.strip():
        tags.add(f"source:{source.strip()}")
    if persistent:
        tags.add("persistent:true")
    for tag in extra_tags or ():
        tags.add(clean_tag(tag))
    return sorted(tags)


def clean_tag(tag: object) -> str:
    """A tag is a non-empty single-line string; anything else is a clear error."""
    if not isinstance(tag, str) or not tag.strip():
        raise BadInput(f"a tag must be a non-empty string, got {tag!r}")
    tag = tag.strip()
    if "\n" in tag or len(tag) > MAX_TAG_LEN:
        raise BadInput(f"a tag must be one line of at most {MAX_TAG_LEN} characters: {tag!r}")
    return tag


def reflection_tags(source_tags: Iterable[Iterable[str]]) -> list[str]:
    """Union of the sources' tags minus the per-moment namespaces and every kind, plus
    ``kind:insight`` and ``source:fay_reflection`` (Fay's ``MemoryStream.reflect``)."""
    inherited = {
        t
        for tags in source_tags
        for t in tags
        if not t.startswith(NOT_INHERITED) and not t.startswith("source:")
    }
    return sorted(inherited | {"kind:insight", "source:fay_reflection"})


def schema() -> dict[str, object]:
    """What ``memory_get_schema`` returns: external agents align their arguments with it."""
    return {
        "kind_enum": list(KIND_ENUM),
        "tag_namespaces": list(TAG_NAMESPACES),
        "notes": (
            "Tags are 'namespace:value' strings. kind: one of kind_enum (an unknown kind is "
            "stored as kind:observation plus kind:unknown:<k>). source: who wrote the memory "
            "(user, fay_self, fay_reflection, claude_code, cursor, mcp, ...). persistent:true "
            "marks long-lived memories; a rule must carry it (kind:rule + persistent:true are "
            "the active rules). domain: the scene (companion, homecare, life_assistant, "
            "home_automation, education, quant, ...). session:<id>, date:<YYYY-MM-DD>, "
            "schedule:<expr> describe one moment and are not inherited by reflections; "
            "when:<YYYY-MM-DD> is a day the content names (fayd writes it: 'last Saturday' "
            "resolved against the node's datetime). "
            "strategy: and symbol: are free values. node_type is observation, conversation or "
            "reflection; importance is 1-10."
        ),
    }
