"""The versioned schema of both backends, and the migrations that bring an older store up to it.

Version 1 is the single-user SQLite layout (no principals; a thought row written before its reply). Version 2
keys everything by principal, writes a thought and its reply in one row, and remembers evictions and the
default session of each connection. Version 3 adds what each principal spent per UTC day (tokens, model calls,
thoughts, refusals, and the calls of the current minute), for limits and `thinking-hats usage`; its table is
created where missing, so 2 -> 3 needs nothing else. Version 4 adds two tables, created where missing, so 3 -> 4
needs nothing else either: the reservations that thoughts in flight hold against their principal's limits, and the
progress of the thought each session is analysing (each hat as it finishes), written only while the web view is
on, so an open page on any worker or replica can show it live. A store never runs code older than its schema: a
newer version is refused.
"""

from __future__ import annotations

VERSION = 4

# Written once per dialect: SQLite has REAL/INTEGER, PostgreSQL DOUBLE PRECISION/BIGINT; the rest is the same.
_TABLES = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    principal TEXT NOT NULL,
    id        TEXT NOT NULL,
    tool      TEXT NOT NULL,
    created   {real} NOT NULL,
    updated   {real} NOT NULL,
    meta      TEXT NOT NULL DEFAULT '{{}}',
    PRIMARY KEY (principal, id)
);
CREATE TABLE IF NOT EXISTS entries (
    principal  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq        {int} NOT NULL,
    number     {int} NOT NULL,
    branch_id  TEXT,
    created    {real} NOT NULL,
    data       TEXT NOT NULL,
    reply      TEXT NOT NULL,
    PRIMARY KEY (principal, session_id, seq),
    FOREIGN KEY (principal, session_id) REFERENCES sessions(principal, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS entries_by_number ON entries(principal, session_id, number);
CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions(updated);
CREATE TABLE IF NOT EXISTS evictions (
    principal TEXT NOT NULL,
    id        TEXT NOT NULL,
    tool      TEXT NOT NULL,
    at        {real} NOT NULL,
    reason    TEXT NOT NULL,
    PRIMARY KEY (principal, id)
);
CREATE INDEX IF NOT EXISTS evictions_by_at ON evictions(at);
CREATE TABLE IF NOT EXISTS defaults (
    principal  TEXT NOT NULL,
    connection TEXT NOT NULL,
    tool       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    updated    {real} NOT NULL,
    PRIMARY KEY (principal, connection, tool)
);
CREATE INDEX IF NOT EXISTS defaults_by_updated ON defaults(updated);
CREATE TABLE IF NOT EXISTS principal_usage (
    principal     TEXT NOT NULL,
    day           {int} NOT NULL,
    input_tokens  {int} NOT NULL DEFAULT 0,
    output_tokens {int} NOT NULL DEFAULT 0,
    cached_tokens {int} NOT NULL DEFAULT 0,
    calls         {int} NOT NULL DEFAULT 0,
    thoughts      {int} NOT NULL DEFAULT 0,
    refusals      {int} NOT NULL DEFAULT 0,
    minute        {int} NOT NULL DEFAULT 0,
    minute_calls  {int} NOT NULL DEFAULT 0,
    PRIMARY KEY (principal, day)
);
CREATE TABLE IF NOT EXISTS progress (
    principal  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    updated    {real} NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (principal, session_id)
);
CREATE TABLE IF NOT EXISTS reservations (
    id        TEXT NOT NULL PRIMARY KEY,
    principal TEXT NOT NULL,
    tokens    {int} NOT NULL,
    calls     {int} NOT NULL,
    expires   {real} NOT NULL
);
CREATE INDEX IF NOT EXISTS reservations_by_principal ON reservations(principal);
"""

SQLITE_TABLES = _TABLES.format(real="REAL", int="INTEGER")
POSTGRES_TABLES = _TABLES.format(real="DOUBLE PRECISION", int="BIGINT")

# Version 1 -> 2 (SQLite only: PostgreSQL support began at version 2). Thoughts that never got a reply were
# orphans of interrupted calls (the defect version 2 removes): their client retried or gave up, so they go.
SQLITE_FROM_V1 = f"""
ALTER TABLE sessions RENAME TO sessions_v1;
ALTER TABLE entries RENAME TO entries_v1;
DROP INDEX IF EXISTS entries_by_number;
DROP INDEX IF EXISTS sessions_by_updated;
{SQLITE_TABLES}
INSERT INTO sessions(principal, id, tool, created, updated, meta)
    SELECT 'local', id, tool, created, updated, meta FROM sessions_v1;
INSERT INTO entries(principal, session_id, seq, number, branch_id, created, data, reply)
    SELECT 'local', session_id, seq, number, branch_id, created, data, reply FROM entries_v1 WHERE reply IS NOT NULL;
DROP TABLE entries_v1;
DROP TABLE sessions_v1;
"""
