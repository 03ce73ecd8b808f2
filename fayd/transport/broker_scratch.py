"""The embedded broker's folder when it cannot be in the state folder: fayd runs as root and
mosquitto as an account that cannot reach it, so mosquitto's files go to a folder of its own
in /tmp (fayd.transport.broker.broker_folder). That folder holds password hashes, the ACL
and mosquitto.db (retained hellos and alerts): nothing of it is left there once the broker
stops. mosquitto.db is kept in the state folder between runs instead (root's, 0600), and
put back before mosquitto starts, so retained messages outlive a restart as they do when
the folder is in the state folder."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from pathlib import Path

from fayd.transport.broker_files import Account, hand_over

log = logging.getLogger(__name__)

DB = "mosquitto.db"


def restore_db(folder: Path, kept: Path, account: Account) -> None:
    """Put the kept database back into ``folder`` (made and handed over already), unless a
    fayd that was killed left one there: that one is newer."""
    target = folder / DB
    if target.exists() or not kept.is_file():
        return
    tmp = folder / (DB + ".restoring")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    shutil.copyfile(kept, tmp, follow_symlinks=False)
    os.chmod(tmp, 0o600)
    hand_over(tmp, account)
    tmp.replace(target)


def put_away(folder: Path, kept: Path) -> None:
    """After mosquitto has stopped (and saved its database): keep the database, remove the
    folder. A failure is logged, never raised: the broker has stopped either way."""
    saved = folder / DB
    try:
        if saved.is_file() and not saved.is_symlink():
            kept.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = kept.with_name(DB + ".tmp")
            shutil.copyfile(saved, tmp)
            os.chmod(tmp, 0o600)
            tmp.replace(kept)
    except OSError as exc:
        log.warning("could not keep the broker's database %s: %s", saved, exc)
    try:
        shutil.rmtree(folder)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove the broker's folder %s: %s", folder, exc)
