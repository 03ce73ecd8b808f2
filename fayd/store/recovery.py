"""Opening the database at start: met when damaged, salvaged, never silently replaced.

A file that is empty, not SQLite, fails the quick integrity check, fails to open because
it is damaged, or holds a row that fails its checksum (fayd.store.checksum: a device key,
a reminder, a care rule, a caregiver) is moved aside (fayd.store.health.move_aside) and
kept. fayd then starts from a new database holding every row that could still be read
from it, completed from the newest good backup only where a table could not be read whole
(fayd.store.salvage). What was read back, what came from the backup and what is lost, by
name for the rows that matter, is logged and returned as notices for ``fayd status``, with
a one-paragraph :attr:`Notices.summary` for the caregivers. A file that cannot be opened
for another reason (a permission, a full disk) stops the start with what to do: moving it
would not help. No file at all is a new installation: silence.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

from fayd.errors import StoreError
from fayd.store import backup, checksum
from fayd.store.db import Store
from fayd.store.health import (
    CHECK_BUDGET_S,
    damage_of,
    find_damage,
    move_aside,
    read_only,
    sync_folder,
    with_companions,
)
from fayd.store.salvage import Salvage, salvage
from fayd.store.salvage_report import describe

log = logging.getLogger(__name__)


class Notices(list[str]):
    """What a user should be told about the database at start (one line each)."""

    #: One paragraph for the caregivers when the database was damaged (else None): what
    #: was lost and what was kept, in plain words.
    summary: str | None = None
    #: What the salvage did, table by table (None: no salvage was needed).
    salvage: Salvage | None = None


def open_checked(
    path: Path, backups: Path, budget_s: float = CHECK_BUDGET_S
) -> tuple[Store, Notices]:
    """The store at ``path``, sound; and what a user should be told about it."""
    if not path.exists():
        notices = Notices(_new_database(path, backups))  # before the new file is made
        return Store(path), notices
    damage = find_damage(path, budget_s) or _checksum_damage(path)
    if damage is None:
        try:
            store = Store(path)
        except StoreError as exc:  # e.g. a damaged page that only the migrations read
            damage = damage_of(exc.__cause__)
            if damage is None:
                raise
        else:
            signed = store.call(checksum.sign_unsigned)
            if signed:
                log.info("signed %d rows written without a checksum", signed)
            return store, Notices()
    return _recover(path, backups, damage, budget_s)


def _recover(path: Path, backups: Path, damage: str, budget_s: float) -> tuple[Store, Notices]:
    copy = move_aside(path, "damaged")
    notices = Notices(
        [f"the database {path} is damaged ({damage}): it was moved to {copy} and is kept there"]
    )
    log.error("%s", notices[0])
    good = backup.newest_good(backups, budget_s)
    try:
        result = _salvage_into(path, copy, good)
    except (sqlite3.Error, StoreError, OSError):
        log.exception("the salvage of %s failed: falling back to the last good backup", copy)
        notices += _rolled_back(path, backups, good)
        return Store(path), notices
    store = Store(path)  # the remaining migrations; sign what the backup gave unsigned
    store.call(checksum.sign_unsigned)
    lines, notices.summary = store.call(describe, result, good, copy)
    notices.salvage = result
    notices += lines
    for notice in notices[1:]:
        log.error("%s", notice)
    return store, notices


def _salvage_into(path: Path, copy: Path, good: backup.Backup | None) -> Salvage:
    """Salvage ``copy`` into a new file at ``path``, put in place only once whole."""
    tmp = path.with_name(path.name + ".salvaging")
    for leftover in with_companions(tmp):  # from a salvage cut short
        leftover.unlink(missing_ok=True)
    try:
        result = salvage(copy, tmp, good.path if good else None)
        os.chmod(tmp, 0o600)
        backup.own_like_folder(tmp)
        os.replace(tmp, path)
        sync_folder(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    log.info("salvage of %s took %.2f s", copy, result.seconds)
    return result


def _rolled_back(path: Path, backups: Path, good: backup.Backup | None) -> list[str]:
    """The old way, when the salvage itself failed: the backup as it is, else empty."""
    for leftover in with_companions(path):
        leftover.unlink(missing_ok=True)
    if good is None:
        return [
            f"there is no good backup in {backups}: fayd starts with an empty database "
            "(no memories, conversations or device keys: add each device again with "
            "fayd devices add NAME)"
        ]
    backup.copy_in(good.path, path)
    return [
        f"fayd starts from the last good backup, {good.describe()}: "
        "what changed after it is not in it"
    ]


def _checksum_damage(path: Path) -> str | None:
    """Rows that fail their checksum, named, as damage; None when every row holds."""
    try:
        with read_only(path) as conn:
            bad = checksum.mismatches(conn)
    except sqlite3.Error as exc:
        return damage_of(exc)  # not damage: Store() will say what is wrong
    if not bad:
        return None
    named = ", ".join(f"the {signed.noun} {key!r}" for signed, key in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    return f"{named}{more} failed {'its' if len(bad) == 1 else 'their'} checksum"


def _new_database(path: Path, backups: Path) -> list[str]:
    """No database: a new installation, unless something of an old one is left."""
    wal = with_companions(path)[1]
    if os.path.lexists(wal):
        # A WAL without its database would be read into the new one: put it aside too.
        copy = move_aside(path, "orphaned")
        log.warning("%s had no database beside it: moved to %s-wal", wal, copy)
    if not backup.list_backups(backups):
        return []
    notice = (
        f"there was no database at {path}, but there are backups in {backups}: fayd starts "
        "with an empty one; to go back to a backup, stop fayd and run fayd restore"
    )
    log.warning("%s", notice)
    return [notice]
