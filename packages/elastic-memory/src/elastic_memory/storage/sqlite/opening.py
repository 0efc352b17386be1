"""Preparing a SQLite file at open: FTS5 is there, and the schema is brought to :data:`.migrations.LATEST`.

Each migration runs in its own write transaction (the store's, passed in): a failure
leaves the file at the previous version.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager

import aiosqlite

from ...errors import SchemaVersionError, StorageError, UsageError
from . import migrations
from .driver import Driver
from .keyword_partitions import KeywordPartitions

__all__ = ["check_fts5", "migrate"]

_FTS5_PROBE = "CREATE VIRTUAL TABLE temp.elastic_memory_fts5_probe USING fts5(x)"


async def check_fts5(conn: aiosqlite.Connection, drv: Driver) -> None:
    """Raise :class:`StorageError` when the driver's SQLite has no FTS5."""
    try:
        await conn.execute(_FTS5_PROBE)
        await conn.execute("DROP TABLE temp.elastic_memory_fts5_probe")
    except drv.module.OperationalError as e:
        msg = (
            f"this SQLite ({drv.name} {drv.sqlite_version}) has no FTS5; "
            "install pysqlite3-binary or sqlean.py, which ship it"
        )
        raise StorageError(msg) from e


async def _version(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("PRAGMA user_version"))
    return int(rows[0][0])


async def migrate(
    conn: aiosqlite.Connection,
    keywords: KeywordPartitions,
    *,
    path: str,
    read_only: str | None,
    transaction: Callable[[], AbstractAsyncContextManager[None]],
    errors: Callable[[str], AbstractContextManager[None]],
) -> None:
    """Apply the pending migrations of the file at ``path``, each in one ``transaction()``.

    Raises:
        SchemaVersionError: The file is newer than this library.
        StorageError: The file is read-only (``read_only`` says why) and needs a migration.
        UsageError: The file is an SQLite database of something else.
    """
    version = await _version(conn)
    if version > migrations.LATEST:
        msg = (
            f"{path!r} has schema version {version}, newer than this elastic-memory "
            f"understands ({migrations.LATEST}); upgrade elastic-memory to open it"
        )
        raise SchemaVersionError(msg)
    if read_only is not None and version < migrations.LATEST:
        msg = (
            f"{path!r} is read-only ({read_only}) and needs its schema migrated from version "
            f"{version} to {migrations.LATEST}; open it once where it is writable, or copy it to a writable folder"
        )
        raise StorageError(msg)
    if version == 0:
        tables = list(await conn.execute_fetchall("SELECT name FROM sqlite_master WHERE type = 'table'"))
        foreign = [t[0] for t in tables if not t[0].startswith(migrations.OWN_TABLES)]
        if foreign:
            msg = (
                f"{path!r} is an SQLite database of something else (tables {foreign[:5]}); "
                "elastic-memory will not change it: pass a new file path"
            )
            raise UsageError(msg)
    for migration in migrations.pending(version):
        with errors(f"migrate the schema to version {migration.version}; it stays at {version}"):
            await _apply(conn, keywords, migration, transaction)
        version = migration.version


async def _apply(
    conn: aiosqlite.Connection,
    keywords: KeywordPartitions,
    migration: migrations.Migration,
    transaction: Callable[[], AbstractAsyncContextManager[None]],
) -> None:
    async with transaction():
        if await _version(conn) >= migration.version:
            return  # another connection applied it while this one waited for the write lock
        for statement in migration.statements:
            await conn.execute(statement)
        if migration.fill_partitions:
            await keywords.fill_registered()
        await conn.execute(f"PRAGMA user_version = {int(migration.version)}")
