"""Opening the database at start: met when damaged, never silently replaced.

A file that is empty, not SQLite, fails the quick integrity check or fails to open because
it is damaged is moved aside (fayd.store.health.move_aside) and fayd starts from the newest
backup that passes the same check, else from an empty database. Every step is logged as an
error and returned as a notice for ``fayd status``, with the path of the kept copy. A file
that cannot be opened for another reason (a permission, a full disk) stops the start with
what to do: moving it would not help. No file at all is a new installation: silence.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from fayd.errors import StoreError
from fayd.store import backup
from fayd.store.db import Store
from fayd.store.health import CHECK_BUDGET_S, damage_of, find_damage, move_aside, with_companions

log = logging.getLogger(__name__)


def open_checked(
    path: Path, backups: Path, budget_s: float = CHECK_BUDGET_S
) -> tuple[Store, list[str]]:
    """The store at ``path``, sound; and what a user should be told about it."""
    if not path.exists():
        notices = _new_database(path, backups)
        return Store(path), notices
    damage = find_damage(path, budget_s)
    if damage is None:
        try:
            return Store(path), []
        except StoreError as exc:  # e.g. a damaged page that only the migrations read
            damage = damage_of(exc.__cause__)
            if damage is None:
                raise
    notices = [_set_aside(path, damage)]
    good = backup.newest_good(backups, budget_s)
    if good is None:
        notices.append(
            f"there is no good backup in {backups}: fayd starts with an empty database "
            "(no memories, conversations or device keys: add each device again with "
            "fayd devices add NAME)"
        )
    else:
        backup.copy_in(good.path, path)
        notices.append(
            f"fayd starts from the last good backup, {good.describe()}: "
            "what changed after it is not in it"
        )
    for notice in notices[1:]:
        log.error("%s", notice)
    return Store(path), notices


def _set_aside(path: Path, damage: str) -> str:
    copy = move_aside(path, "damaged")
    notice = f"the database {path} is damaged ({damage}): it was moved to {copy} and is kept there"
    log.error("%s", notice)
    return notice


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
