"""What the household is told after a salvage (fayd.store.salvage), in plain words.

Per kind that matters (device keys, reminders, care rules, caregivers, memories, events):
how many rows were read back, how many came from the backup, how many are lost; every lost
device key, reminder, care rule or caregiver by name. Which ones are lost is known from the
ids that could not be read (a reminder, a memory, an event), from the rows that failed their
checksum, and for rows keyed by a name from what still names them: a device with settings
or a hello but no key, a rule with state but no rule, a caregiver on a ladder but unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from fayd.store.backup import Backup
from fayd.store.salvage import Salvage, TableSalvage


@dataclass(frozen=True)
class Kind:
    table: str
    one: str
    many: str
    #: Never silently dropped: each lost row is named.
    matters: bool = False


KINDS = (
    Kind("device_keys", "device key", "device keys", matters=True),
    Kind("reminders", "reminder", "reminders", matters=True),
    Kind("care_rules", "care rule", "care rules", matters=True),
    Kind("care_caregivers", "caregiver", "caregivers", matters=True),
    Kind("memory_nodes", "memory", "memories"),
    Kind("device_events", "event", "events"),
)


@dataclass
class Tally:
    """One kind's outcome."""

    kind: Kind
    salvaged: int = 0
    from_backup: int = 0
    lost: int = 0
    #: Some could not be read and how many were lost cannot be told.
    unsure: bool = False
    lost_names: list[str] = field(default_factory=list)
    restored_names: list[str] = field(default_factory=list)

    def counts(self) -> str:
        lost = (
            f"{self.lost}+ lost (how many more cannot be told)"
            if self.unsure
            else f"{self.lost} lost"
        )
        backed = f"{self.from_backup} from the backup"
        return f"{self.kind.many}: {self.salvaged} read back, {backed}, {lost}"

    def said(self) -> str:
        n = self.lost
        if self.unsure and not n:
            return f"some {self.kind.many}"
        return f"{n} {self.kind.one if n == 1 else self.kind.many}" + (
            " or more" if self.unsure else ""
        )

    @property
    def intact(self) -> bool:
        return not self.lost and not self.unsure


def describe(
    db: sqlite_utils.Database, result: Salvage, good: Backup | None, copy: Path
) -> tuple[list[str], str]:
    """The notices after a salvage, and a one-paragraph summary for the caregivers; run on
    the new database (what still names a lost row is read from it)."""
    tallies = [_tally(db, kind, result.of(kind.table)) for kind in KINDS]
    others = _others(result)
    source = f"the last good backup, {good.describe()}" if good else None
    if result.schema_lost:  # nothing read: the backup as it was, or nothing
        headline = _nothing_read(good)
        return [headline], f"fayd found its database damaged. {headline}."
    lines = [_what_was_done(source)]
    headline = _headline(tallies, others)
    lines.append(headline)
    lines.append("; ".join(t.counts() for t in tallies))
    named = [f"lost: {name}" for t in tallies for name in t.lost_names]
    lines += named
    vectors = len(result.of("memory_embeddings").lost or ())
    if vectors:
        lines.append(f"{vectors} memories' vectors could not be read: they are made again at start")
    restored = [n for t in tallies for n in t.restored_names]
    if restored:
        lines.append(
            f"taken from the backup (they could not be read; check none was removed since): "
            f"{', '.join(restored)}"
        )
    when = datetime.now().strftime("%Y-%m-%d %H:%M")
    summary = " ".join(
        [
            headline.replace("The database was damaged.", f"The database was damaged ({when}).", 1),
            *(f"Lost: {name}." for t in tallies for name in t.lost_names),
            f"The damaged file is kept at {copy}.",
        ]
    )
    return lines, summary


def _nothing_read(good: Backup | None) -> str:
    if good is None:
        return (
            "nothing could be read from it and there is no good backup: fayd starts with an "
            "empty database (no memories, conversations, reminders, care rules or device "
            "keys: add each device again with fayd devices add NAME)"
        )
    return (
        f"nothing could be read from it: fayd starts from the last good backup, "
        f"{good.describe()}; what changed after it (device keys, reminders, care rules, "
        "caregivers added since) is not in it"
    )


def _what_was_done(source: str | None) -> str:
    read = "fayd read back every row it could into a new database"
    if source:
        return f"{read}; what could not be read was taken from {source}"
    return f"{read}; there is no good backup to take what could not be read from"


def _headline(tallies: list[Tally], others: Tally) -> str:
    lost = [t.said() for t in [*tallies, others] if not t.intact]
    if not lost:
        return "The database was damaged. Everything could be read back or was in the backup."
    intact = [t.kind.many for t in tallies if t.kind.matters and t.intact]
    text = f"The database was damaged. Everything could be read back except {_joined(lost)}"
    if intact:
        verb = "is" if len(intact) == 1 else "are all"
        text += f"; {_joined(intact)} {verb} intact"
    return text + "."


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _tally(db: sqlite_utils.Database, kind: Kind, t: TableSalvage) -> Tally:
    tally = Tally(kind, t.salvaged, t.from_backup, unsure=t.gave_up)
    if kind.matters:
        tally.restored_names = [_name(kind, k, _words_of(row)) for k, row in t.restored.items()]
    if t.lost is not None:  # a table whose rowid is its id: the lost ids are known
        tally.lost = len(t.lost)
        if kind.matters:
            tally.lost_names = [_lost(kind, i, _words(db, t, i)) for i in sorted(t.lost)]
        return tally
    missing = [k for k in t.damaged if k not in t.restored]
    if t.read_failed and kind.matters:  # who still names a row that is not there
        missing += [k for k in _named_elsewhere(db, kind.table) if k not in missing]
    tally.lost = len(missing)
    tally.unsure |= t.read_failed
    if kind.matters:
        tally.lost_names = [_lost(kind, k, None) for k in missing]
    return tally


def _others(result: Salvage) -> Tally:
    """Every other table (conversations, facts, documents …) as one."""
    tally = Tally(Kind("", "other record", "other records"))
    for table, t in result.tables.items():
        if table in {k.table for k in KINDS}:
            continue
        tally.salvaged += t.salvaged
        tally.from_backup += t.from_backup
        tally.lost += len(t.lost or ())
        tally.unsure |= t.gave_up or (t.read_failed and t.lost is None)
    return tally


def _name(kind: Kind, key: Any, words: str | None) -> str:
    if kind.table == "device_keys":
        return f"the device key of {key!r}"
    if kind.table == "reminders":
        return f"the reminder no. {key} " + (f"{words!r}" if words else "(its words unknown)")
    return f"the {kind.one} {key!r}"


def _lost(kind: Kind, key: Any, words: str | None) -> str:
    """A lost row's name and what to do about it."""
    todo = {
        "device_keys": f": add the device again (fayd devices add {key})",
        "reminders": ": set it again",
        "care_rules": ": add it again (fayd care rules add)",
        "care_caregivers": ": add them again (fayd care caregivers add)",
    }
    return _name(kind, key, words) + todo.get(kind.table, "")


def _words_of(row: dict[str, Any]) -> str | None:
    text = row.get("text")
    if not text:
        return None
    words = str(text).split()
    return " ".join(words[:6]) + ("…" if len(words) > 6 else "")


def _words(db: sqlite_utils.Database, t: TableSalvage, reminder: int) -> str | None:
    """A lost reminder's first words: as read (it failed its checksum), else as its
    check-ins or announcements still say them."""
    text = (t.damaged.get(reminder) or {}).get("text")
    for sql in (
        "SELECT text FROM checkins WHERE reminder_id = ? ORDER BY id DESC LIMIT 1",
        "SELECT text FROM announcements WHERE reminder_id = ? ORDER BY id DESC LIMIT 1",
    ):
        if text:
            break
        row = db.execute(sql, [reminder]).fetchone()
        text = row[0] if row else None
    return _words_of({"text": text})


def _named_elsewhere(db: sqlite_utils.Database, table: str) -> list[str]:
    """Keys another table still names but ``table`` lacks."""
    if table == "device_keys":
        sql = (
            "SELECT id FROM devices UNION SELECT device FROM device_settings"
            " EXCEPT SELECT device FROM device_keys"
        )
    elif table == "care_rules":
        sql = (
            "SELECT substr(key, 6) FROM care_state WHERE key LIKE 'rule:%'"
            " EXCEPT SELECT name FROM care_rules"
        )
    elif table == "care_caregivers":
        sql = (
            "SELECT DISTINCT json_extract(step.value, '$[0]') FROM care_rules,"
            " json_each(care_rules.ladder) AS step EXCEPT SELECT name FROM care_caregivers"
        )
    else:
        return []
    return sorted(r[0] for r in db.execute(sql).fetchall() if r[0])
