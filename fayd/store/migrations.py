"""Schema migrations: registered functions, applied in order, recorded in a table.

Add a migration by appending a function to MIGRATIONS; never edit one that has shipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import sqlite_utils

Migration = Callable[[sqlite_utils.Database], None]


def m001_spine(db: sqlite_utils.Database) -> None:
    """Devices, their events, conversations and messages."""
    db["devices"].create(
        {
            "id": str,
            "roles": str,  # JSON list
            "fw": str,
            "caps": str,  # JSON object
            "audio_in": str,
            "audio_out": str,
            "user": str,
            "online": int,
            "first_seen": float,
            "last_seen": float,
        },
        pk="id",
    )
    db["device_events"].create(
        {
            "id": int,
            "device": str,
            "seq": int,
            "sensor": str,
            "ts": float,
            "data": str,  # JSON object
            "received_at": float,
        },
        pk="id",
    )
    # A replayed event (same device, same sequence number) is stored once.
    db["device_events"].create_index(["device", "seq"], unique=True)
    db["conversations"].create(
        {"id": int, "user": str, "device": str, "started_at": float, "last_at": float},
        pk="id",
    )
    db["conversations"].create_index(["user", "device", "last_at"])
    db["messages"].create(
        {
            "id": int,
            "conversation_id": int,
            "role": str,  # user | assistant
            "text": str,
            "created_at": float,
            "meta": str,  # JSON: timings, source (voice/text)
        },
        pk="id",
        foreign_keys=[("conversation_id", "conversations", "id")],
    )
    db["messages"].create_index(["conversation_id", "id"])


def m002_memory(db: sqlite_utils.Database) -> None:
    """The memory stream (Fay's nodes), its tags, embeddings and user portraits.

    Node ids are our own (AUTOINCREMENT: never reused after a delete, unlike Fay's
    ``len(nodes)``); Fay's ids and time steps are kept only to map at the import/export
    boundary. Times are real UTC timestamps.
    """
    db.execute(
        """CREATE TABLE memory_nodes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            username TEXT NOT NULL,
            scope TEXT NOT NULL DEFAULT 'user',      -- user | household
            node_type TEXT NOT NULL
                CHECK (node_type IN ('observation', 'conversation', 'reflection')),
            content TEXT NOT NULL CHECK (length(trim(content)) > 0),
            importance REAL NOT NULL,
            datetime TEXT NOT NULL DEFAULT '',       -- Fay's "YYYY/MM/DD HH:MM:SS", local
            created_at REAL NOT NULL,                -- UTC epoch seconds
            last_retrieved_at REAL NOT NULL,
            step INTEGER NOT NULL,                   -- Fay's ``created`` time step, per user
            retrieved_step INTEGER NOT NULL,         -- Fay's ``last_retrieved`` step
            pointer_id TEXT,                         -- JSON list of our node ids, or NULL
            fay_node_id INTEGER                      -- the id it had in an imported nodes.json
        )"""
    )
    db.execute("CREATE INDEX memory_nodes_user ON memory_nodes (username, id)")
    db.execute(
        """CREATE TABLE memory_tags (
            node_id INTEGER NOT NULL REFERENCES memory_nodes (id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (node_id, tag)
        ) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX memory_tags_tag ON memory_tags (tag, node_id)")
    db.execute(
        """CREATE TABLE memory_embeddings (
            node_id INTEGER PRIMARY KEY REFERENCES memory_nodes (id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL CHECK (length(vector) = 4 * dim)  -- float32, little-endian
        )"""
    )
    db.execute(
        """CREATE TABLE memory_profiles (
            username TEXT PRIMARY KEY,
            portrait TEXT NOT NULL DEFAULT '',
            extra_info TEXT NOT NULL DEFAULT '',
            updated_at REAL NOT NULL
        )"""
    )


def m003_memory_jiyi(db: sqlite_utils.Database) -> None:
    """Memory jobs' last runs, jiyi's semantic facts and working memory, and the quarantine.

    A fact is never deleted: a newer conflicting one closes it (``valid_to``), so "what was
    true on date D" stays answerable. Scope ``household`` rows are visible to every user.
    """
    db.execute(
        """CREATE TABLE memory_jobs (
            name TEXT PRIMARY KEY,
            last_slot REAL NOT NULL,        -- the scheduled time (UTC epoch) last claimed
            started_at REAL NOT NULL,
            finished_at REAL,
            status TEXT NOT NULL,           -- running | ok | error
            detail TEXT NOT NULL DEFAULT '' -- JSON summary or the error
        )"""
    )
    db.execute(
        """CREATE TABLE memory_facts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            username TEXT NOT NULL,
            scope TEXT NOT NULL DEFAULT 'user' CHECK (scope IN ('user', 'household')),
            subject TEXT NOT NULL CHECK (length(trim(subject)) > 0),
            predicate TEXT NOT NULL CHECK (length(trim(predicate)) > 0),
            object TEXT NOT NULL CHECK (length(trim(object)) > 0),
            valid_from REAL NOT NULL,
            valid_to REAL,                  -- NULL: still valid
            trust TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            closed_by INTEGER REFERENCES memory_facts (id)
        )"""
    )
    db.execute(
        "CREATE INDEX memory_facts_key ON memory_facts"
        " (username, scope, subject COLLATE NOCASE, predicate COLLATE NOCASE, valid_to)"
    )
    db.execute(
        """CREATE TABLE memory_working (
            username TEXT NOT NULL,
            session TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (username, session, key)
        ) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX memory_working_expiry ON memory_working (expires_at)")
    db.execute(
        """CREATE TABLE memory_quarantine (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            item TEXT NOT NULL CHECK (item IN ('node', 'fact')),
            username TEXT NOT NULL,
            payload TEXT NOT NULL,          -- JSON: the write, replayed on approval
            trust TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            reason TEXT NOT NULL,
            created_at REAL NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'rejected')),
            decided_at REAL,
            result_id INTEGER               -- the node or fact written on approval
        )"""
    )
    db.execute("CREATE INDEX memory_quarantine_status ON memory_quarantine (status, id)")


def m004_device_registry(db: sqlite_utils.Database) -> None:
    """Per-device settings (NULL = not set: the hello or the config decides), and which
    sensor events are already in the memory stream."""
    db.execute(
        """CREATE TABLE device_settings (
            device TEXT PRIMARY KEY,
            user TEXT,                 -- the household member the device belongs to
            wake INTEGER,              -- wake word on (1) / off (0)
            wake_threshold REAL,       -- 0-1
            volume INTEGER,            -- 0-100
            barge_in INTEGER,          -- on (1) / off (0)
            rev INTEGER NOT NULL,      -- increases with every change (the daemon polls it)
            updated_at REAL NOT NULL
        )"""
    )
    db.execute("ALTER TABLE device_events ADD COLUMN remembered INTEGER NOT NULL DEFAULT 0")
    db.execute("UPDATE device_events SET remembered = 1")  # the past stays as it was
    db.execute("CREATE INDEX device_events_to_remember ON device_events (id) WHERE remembered = 0")


def m005_memory_documents(db: sqlite_utils.Database) -> None:
    """MemoryFS documents (seed 002): per-user categorised documents and their entries.

    One row per entry (a ``\\n\\n`` block of MemoryFS's file), so truncation drops whole
    entries. ``conversation`` keys the per-conversation categories (important_event,
    life_sim; '' for the others) and, on an entry, names the conversation it comes from.
    """
    db.execute(
        """CREATE TABLE memory_documents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            username TEXT NOT NULL,
            category TEXT NOT NULL CHECK (category IN ('user_persona', 'character_persona',
                'important_event', 'timeline', 'life_sim', 'recent_digest')),
            conversation TEXT NOT NULL DEFAULT '',
            version INTEGER NOT NULL DEFAULT 0,     -- +1 on every write
            updated_at REAL NOT NULL,
            UNIQUE (username, category, conversation)
        )"""
    )
    db.execute(
        """CREATE TABLE memory_document_entries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES memory_documents (id) ON DELETE CASCADE,
            at REAL NOT NULL,                       -- UTC epoch: orders the entries
            conversation TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL CHECK (length(trim(text)) > 0),
            created_at REAL NOT NULL
        )"""
    )
    db.execute(
        "CREATE INDEX memory_document_entries_doc ON memory_document_entries (document_id, at, id)"
    )


def m006_memory_fts(db: sqlite_utils.Database) -> None:
    """FTS5 over node contents for lexical (BM25) fusion, filled with the existing nodes."""
    from fayd.store import lexical

    lexical.create_table(db)
    lexical.backfill(db)


def m007_memory_household(db: sqlite_utils.Database) -> None:
    """Household nodes are read with every user's own: a partial index finds the few of them
    without a scan of every node, and their lexical rows are shared by every user."""
    from fayd.store import lexical

    db.execute("CREATE INDEX memory_nodes_household ON memory_nodes (id) WHERE scope = 'household'")
    lexical.mark_household(db)


def m008_device_keys(db: sqlite_utils.Database) -> None:
    """Each device's secret (its MQTT password and OTA signatures come from it), and a
    sensor event's identity by (device, epoch, seq): a device whose counter starts again
    after its flash is erased also starts a new epoch, so its new events are not taken for
    replays of the old ones. Events stored before this have the epoch ''."""
    db.execute(
        """CREATE TABLE device_keys (
            device TEXT PRIMARY KEY,
            secret TEXT NOT NULL,       -- 64 hex digits (fayd.auth.device_keys)
            created_at REAL NOT NULL
        )"""
    )
    db.execute("ALTER TABLE device_events ADD COLUMN epoch TEXT NOT NULL DEFAULT ''")
    db.execute("DROP INDEX idx_device_events_device_seq")
    db.execute("CREATE UNIQUE INDEX device_events_identity ON device_events (device, epoch, seq)")


def m009_preferences(db: sqlite_utils.Database) -> None:
    """What people asked of fayd by voice: a user's preferences (quiet hours …) and a
    device's "sleep until" (fayd starts no talk on it before then)."""
    db.execute(
        """CREATE TABLE preferences (
            username TEXT NOT NULL,
            key TEXT NOT NULL,          -- e.g. quiet_hours
            value TEXT NOT NULL,        -- JSON
            updated_at REAL NOT NULL,
            PRIMARY KEY (username, key)
        )"""
    )
    db.execute(
        """CREATE TABLE device_sleep (
            device TEXT PRIMARY KEY,
            until REAL NOT NULL         -- Unix time
        )"""
    )


def m010_care(db: sqlite_utils.Database) -> None:
    """Eldercare (fayd.care, docs/care.md): rules, caregivers, alerts and their escalation,
    the notifications' outbox, and the engine's own state (event cursor, rule states)."""
    db.execute(
        """CREATE TABLE care_caregivers (
            name TEXT PRIMARY KEY,
            urls TEXT NOT NULL,         -- JSON list of Apprise URLs
            created_at REAL NOT NULL
        )"""
    )
    db.execute(
        """CREATE TABLE care_rules (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            user TEXT NOT NULL,
            kind TEXT NOT NULL,         -- threshold | missing | inactivity | event | device
            spec TEXT NOT NULL,         -- JSON: what the kind needs (fayd.care.rules)
            severity TEXT NOT NULL,
            checkin INTEGER NOT NULL,   -- ask the person first
            ladder TEXT NOT NULL,       -- JSON [[caregiver, ack_s], ...]
            cooldown_s REAL NOT NULL,
            created_at REAL NOT NULL
        )"""
    )
    db.execute(
        """CREATE TABLE care_alerts (
            id TEXT PRIMARY KEY,
            rule TEXT NOT NULL,         -- the rule's name (kept when the rule is removed)
            user TEXT NOT NULL,
            kind TEXT NOT NULL,
            severity TEXT NOT NULL,
            text TEXT NOT NULL,
            state TEXT NOT NULL,        -- open | acknowledged | resolved
            opened_at REAL NOT NULL,
            step INTEGER NOT NULL,      -- -1 check-in, 0.. the ladder's caregivers
            step_until REAL,            -- when the step's time to answer ends
            count INTEGER NOT NULL,     -- how many times the condition was seen
            closed_at REAL,
            closed_by TEXT,
            detail TEXT NOT NULL        -- JSON
        )"""
    )
    db.execute("CREATE INDEX care_alerts_state ON care_alerts (state, rule)")
    db.execute(
        """CREATE TABLE care_outbox (
            id INTEGER PRIMARY KEY,
            alert TEXT NOT NULL,
            step INTEGER NOT NULL,
            caregiver TEXT NOT NULL,
            url TEXT NOT NULL,
            title TEXT NOT NULL,
            body TEXT NOT NULL,
            created_at REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at REAL NOT NULL,
            sent_at REAL,
            last_error TEXT,
            UNIQUE (alert, step, caregiver, url)
        )"""
    )
    db.execute(
        """CREATE TABLE care_state (
            key TEXT PRIMARY KEY,       -- "cursor", "rule:<name>"
            value TEXT NOT NULL         -- JSON
        )"""
    )


def m011_reminders(db: sqlite_utils.Database) -> None:
    """Reminders and timers (fayd.reminders), what is waiting to be said (announcements: a
    fire is kept until a device has spoken it, across restarts), and medication check-ins
    (asked, asked again, answered or left unconfirmed)."""
    db.execute(
        """CREATE TABLE reminders (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            username TEXT NOT NULL,
            text TEXT NOT NULL,             -- what to do, in the user's words
            kind TEXT NOT NULL,             -- reminder | medication | timer
            name TEXT NOT NULL DEFAULT '',  -- a timer's name ("eggs")
            urgent INTEGER NOT NULL DEFAULT 0,
            lang TEXT NOT NULL DEFAULT 'en',
            tz TEXT NOT NULL,               -- the user's zone (wall-clock rules)
            rule TEXT NOT NULL,             -- JSON (fayd.reminders.rules.Rule)
            first_at REAL NOT NULL,         -- the first fire, Unix time
            due_at REAL,                    -- the rule's next occurrence
            next_at REAL,                   -- when it fires next (a snooze, else due_at)
            state TEXT NOT NULL DEFAULT 'active',  -- active | done | cancelled | broken
            error TEXT,                     -- why a row is broken
            source TEXT NOT NULL DEFAULT '',-- the utterance (or command) that set it
            device TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            fired_at REAL
        )"""
    )
    db.execute("CREATE INDEX reminders_due ON reminders (next_at) WHERE state = 'active'")
    db.execute("CREATE INDEX reminders_user ON reminders (username, state)")
    db.execute(
        """CREATE TABLE announcements (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            username TEXT NOT NULL,
            text TEXT NOT NULL,
            kind TEXT NOT NULL,             -- reminder | medication | timer | checkin | …
            urgent INTEGER NOT NULL DEFAULT 0,
            lang TEXT NOT NULL DEFAULT 'en',
            due_at REAL NOT NULL,           -- when it should have been said
            created_at REAL NOT NULL,
            state TEXT NOT NULL DEFAULT 'waiting',  -- waiting | spoken
            spoken_at REAL,
            devices TEXT,                   -- JSON list: where it was said
            reminder_id INTEGER,
            checkin_id INTEGER
        )"""
    )
    db.execute("CREATE INDEX announcements_waiting ON announcements (id) WHERE state = 'waiting'")
    db.execute(
        """CREATE TABLE checkins (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            username TEXT NOT NULL,
            reminder_id INTEGER NOT NULL,
            text TEXT NOT NULL,
            lang TEXT NOT NULL DEFAULT 'en',
            asked_at REAL NOT NULL,
            next_at REAL NOT NULL,          -- asked again (or given up) then
            tries INTEGER NOT NULL DEFAULT 1,
            state TEXT NOT NULL DEFAULT 'open',  -- open | yes | no | unconfirmed
            answered_at REAL
        )"""
    )
    db.execute("CREATE INDEX checkins_open ON checkins (next_at) WHERE state = 'open'")
    db.execute("CREATE INDEX checkins_user ON checkins (username, asked_at)")


def m012_household(db: sqlite_utils.Database) -> None:
    """Who is who (docs/security.md): a device shared by several people (JSON list of the
    members allowed on it), and the people a caregiver watches over (JSON list; empty: the
    whole household, as before)."""
    db.execute("ALTER TABLE device_settings ADD COLUMN shared TEXT")
    db.execute("ALTER TABLE care_caregivers ADD COLUMN people TEXT NOT NULL DEFAULT '[]'")


def m013_checksums(db: sqlite_utils.Database) -> None:
    """A checksum on the rows that matter (fayd.store.checksum): device keys, reminders,
    care rules and caregivers, so a flipped byte in one is found at start. The rows already
    there are signed now, as they are."""
    from fayd.store import checksum

    for table in checksum.SIGNED:
        db.execute(f"ALTER TABLE {table} ADD COLUMN {checksum.COLUMN} TEXT")
    checksum.sign_unsigned(db)


def m014_announcement_about(db: sqlite_utils.Database) -> None:
    """What waiting words are about ("care:<alert id>:open"): checked when they are said,
    and dropped when it is no longer so (fayd.agent.announce)."""
    db.execute("ALTER TABLE announcements ADD COLUMN about TEXT")


def m015_event_user(db: sqlite_utils.Database) -> None:
    """Whose an event is when no device says it: what a person told fayd of how they feel
    (sensor ``wellbeing``, fayd.service.wellbeing) is theirs on any device, shared or not.
    NULL for a device's own events (its person is the device's, as before)."""
    db.execute("ALTER TABLE device_events ADD COLUMN user TEXT")


def m016_device_language(db: sqlite_utils.Database) -> None:
    """The language a device's speech is heard in ("en", "zh", "auto"; NULL: the household's
    speech.asr_language)."""
    db.execute("ALTER TABLE device_settings ADD COLUMN language TEXT")


def m017_device_pause(db: sqlite_utils.Database) -> None:
    """The longest pause fayd waits through for a device's speaker (ms; NULL: the
    household's speech.endpoint_longest_ms)."""
    db.execute("ALTER TABLE device_settings ADD COLUMN pause_ms INTEGER")


MIGRATIONS: list[Migration] = [
    m001_spine,
    m002_memory,
    m003_memory_jiyi,
    m004_device_registry,
    m005_memory_documents,
    m006_memory_fts,
    m007_memory_household,
    m008_device_keys,
    m009_preferences,
    m010_care,
    m011_reminders,
    m012_household,
    m013_checksums,
    m014_announcement_about,
    m015_event_user,
    m016_device_language,
    m017_device_pause,
]


def apply_migrations(db: sqlite_utils.Database, migrations: list[Migration]) -> list[str]:
    """Apply those not yet recorded, each in its own transaction; returns their names."""
    if "_migrations" not in db.table_names():
        db["_migrations"].create({"version": int, "name": str, "applied_at": float}, pk="version")
    done = {row["version"] for row in db["_migrations"].rows}
    applied = []
    for version, migration in enumerate(migrations, start=1):
        if version in done:
            continue
        with db.atomic():
            migration(db)
            db["_migrations"].insert(
                {"version": version, "name": migration.__name__, "applied_at": time.time()}
            )
        applied.append(migration.__name__)
    return applied
