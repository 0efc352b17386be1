"""Reaching a PostgreSQL store: its URL, the optional psycopg, and preparing the server at open.

:func:`prepare` creates the store's schema and pgvector when missing and migrates the
schema, one opener at a time (an advisory lock in :data:`LOCK_SPACE`); :func:`configure`
sets up each pooled connection. A URL's ``?schema=`` is elastic-memory's, not libpq's
(:func:`split_url`), and its password is never shown (:func:`redact`).
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from ...errors import SchemaVersionError, StorageError, UsageError
from .. import queries as q
from ..sqlite.migrations import Migration
from . import schema as pg_schema
from .text import JsonText

__all__ = [
    "LOCK_SPACE",
    "Server",
    "configure",
    "first_line",
    "is_url",
    "prepare",
    "psycopg_module",
    "redact",
    "split_url",
]

log = logging.getLogger("elastic_memory")

_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
#: Connection parameters that are secrets: never shown, never serialised.
_SECRETS = frozenset({"password", "sslpassword"})
_DEFAULT_SCHEMA = "elastic_memory"
#: Advisory lock namespace ("EM"); the second key is the schema's hash.
LOCK_SPACE = 0x454D


@dataclass(frozen=True)
class Server:
    """What :func:`prepare` found: the search path (the store's schema, then pgvector's) and pgvector's version."""

    search_path: str
    pgvector: tuple[int, ...] | None


def is_url(location: str) -> bool:
    """True when ``location`` names a PostgreSQL server (``postgresql://`` or ``postgres://``)."""
    return location.startswith(_SCHEMES)


def redact(url: str) -> str:
    """``url`` without its password: what logs, errors, ``stats()`` and serialised adapters show.

    Reopening it takes the password from ``PGPASSWORD`` or ``~/.pgpass``, as libpq does.

    >>> redact("postgresql://ana:s3cret@db:5432/mem?schema=team")
    'postgresql://ana@db:5432/mem?schema=team'
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if parts.password is None and not any(k in _SECRETS for k, _ in query):
        return url
    netloc = parts.netloc
    if parts.password is not None:
        host = netloc.rsplit("@", 1)[1]
        netloc = f"{parts.username}@{host}" if parts.username else host
    kept = urlencode([(k, v) for k, v in query if k not in _SECRETS], quote_via=quote)
    return urlunsplit(parts._replace(netloc=netloc, query=kept))


def split_url(url: str) -> tuple[str, str]:
    """``(libpq URL, schema)``: the ``schema`` query parameter is elastic-memory's, not libpq's.

    Raises:
        UsageError: The schema is not a plain identifier.
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [v for k, v in query if k == "schema"]
    schema = schemas[-1] if schemas else _DEFAULT_SCHEMA
    if not _SCHEMA.fullmatch(schema):
        msg = f"schema {schema!r} in the URL must be 1-63 letters, digits or underscores, not starting with a digit"
        raise UsageError(msg)
    rest = urlencode([(k, v) for k, v in query if k != "schema"], quote_via=quote)
    return urlunsplit(parts._replace(query=rest)), schema


def psycopg_module() -> Any:
    """The ``psycopg`` module (with ``psycopg_pool`` importable).

    Raises:
        UsageError: The postgres extra is not installed.
    """
    try:
        import psycopg  # noqa: PLC0415 - optional: the postgres extra
        import psycopg_pool  # noqa: PLC0415, F401
    except ImportError as e:
        msg = "a PostgreSQL URL needs the postgres extra: pip install 'elastic-memory[postgres]'"
        raise UsageError(msg) from e
    return psycopg


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (its class name when it has none)."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


async def prepare(conn: Any, schema: str, shown: str) -> Server:
    """Create the schema and pgvector when missing and migrate, one opener at a time; what the server has.

    The lock is database-wide: pgvector is one per database, and two processes opening new
    stores at once must not both create it (or the same schema).
    """
    psycopg = psycopg_module()
    ident = q.quote_ident(schema)
    try:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", [LOCK_SPACE])
            cur = await conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", [schema])
            if await cur.fetchone() is None:  # an administrator may have made it (a role without CREATE)
                await conn.execute(f"CREATE SCHEMA {ident}")
            vector = await _vector_extension(conn, schema)
            path = ", ".join(q.quote_ident(n) for n in dict.fromkeys([schema, vector[0] if vector else "public"]))
            await conn.execute(f"SET LOCAL search_path TO {path}")
            await _migrate(conn, shown)
    except psycopg.Error as e:
        msg = f"could not prepare schema {schema!r} on {shown}: {first_line(e)}; check the role's privileges"
        raise StorageError(msg) from e
    return Server(path, vector[1] if vector else None)


async def _vector_extension(conn: Any, schema: str) -> tuple[str, tuple[int, ...]] | None:
    """Pgvector's schema and version, creating the extension when the role may; ``None`` without it."""
    psycopg = psycopg_module()
    find = (
        "SELECT n.nspname, e.extversion FROM pg_extension AS e "
        "JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    )
    row = await (await conn.execute(find)).fetchone()
    for where in ("", f" SCHEMA {q.quote_ident(schema)}"):  # PostgreSQL 15+ may refuse CREATE in public
        if row is not None:
            break
        with contextlib.suppress(psycopg.Error):
            async with conn.transaction():  # a savepoint: no privilege, or no pgvector on the server
                await conn.execute(f"CREATE EXTENSION vector{where}")
        row = await (await conn.execute(find)).fetchone()
    if row is None:
        log.warning("elastic-memory: pgvector is not installed and could not be created; keyword recall only")
        return None
    version = tuple(int(p) for p in re.findall(r"\d+", str(row[1]))[:3])
    return str(row[0]), version


async def _migrate(conn: Any, shown: str) -> None:
    """Inside :func:`prepare`'s transaction and lock: bring the schema to :data:`pg_schema.LATEST`."""
    await conn.execute(pg_schema.VERSION_TABLE)
    cur = await conn.execute("SELECT max(version) FROM schema_version")
    version = int((await cur.fetchone())[0] or 0)
    if version == 0:
        cur = await conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name <> 'schema_version' ORDER BY table_name LIMIT 5"
        )
        foreign = [str(r[0]) for r in await cur.fetchall()]
        if foreign:
            msg = (
                f"schema {shown} holds tables of something else ({foreign}); elastic-memory will not "
                "change them: name another schema with ?schema= in the URL"
            )
            raise UsageError(msg)
    if version > pg_schema.LATEST:
        msg = (
            f"{shown} has schema version {version}, newer than this elastic-memory understands "
            f"({pg_schema.LATEST}); upgrade elastic-memory to open it"
        )
        raise SchemaVersionError(msg)
    for migration in pg_schema.MIGRATIONS:
        if migration.version > version:
            await _apply(conn, migration)


async def _apply(conn: Any, migration: Migration) -> None:
    for statement in migration.statements:
        await conn.execute(statement)
    await conn.execute("INSERT INTO schema_version (version) VALUES (%s)", [migration.version])


async def configure(conn: Any, server: Server, timeout: float) -> None:
    """Each pooled connection: the store's schema first, NUL-safe text and JSON, pgvector's types."""
    from .adapt import JsonTextDumper, JsonTextLoader, NulSafeDumper, NulSafeLoader  # noqa: PLC0415 - psycopg

    await conn.execute(f"SET search_path TO {server.search_path}")
    await conn.execute("SET standard_conforming_strings = on")  # metadata keys are U&'...' constants
    await conn.execute("SELECT set_config('lock_timeout', %s, false)", [f"{int(timeout * 1000)}ms"])
    conn.adapters.register_dumper(str, NulSafeDumper)
    conn.adapters.register_dumper(JsonText, JsonTextDumper)
    conn.adapters.register_loader("text", NulSafeLoader)
    conn.adapters.register_loader("jsonb", JsonTextLoader)
    if server.pgvector is not None:
        from pgvector.psycopg import register_vector_async  # noqa: PLC0415 - optional

        await register_vector_async(conn)
