"""The schema of each shared tier on a PostgreSQL server, and the move from the names of earlier versions.

A tier (``"global"``, ``"pool:<name>"``, or ``"agent:<id>"`` for a private tier on the
server) lives in schema ``<prefix>_<suffix>``, where the prefix is the URL's ``?schema=``
(default ``em``) and the suffix comes from the tier alone
(:func:`schema_name`):

- **clean**: ``<kind>`` or ``<kind>_<name>`` when the kind is lowercase letters, the name
  lowercase letters, digits and ``_``, the suffix has no ``__`` and the schema fits in 63
  bytes (``em_global``, ``em_pool_team``);
- **hashed**, every other tier: a readable cut of the tier (lowercased, every other
  character ``_``, runs of ``_`` made one) + ``__`` + the 32 hex digits of the tier's
  blake2b-128 (``em_pool_team_research__<hash>``).

Why no two tiers share a schema on one URL: the prefix is the URL's, so the schema gives
back the suffix. A clean suffix has no ``__``, a hashed one has, so a clean name never
equals a hashed one (the old naming let pool ``a_b_8dfa`` take pool ``a-b``'s schema so).
Two clean suffixes differ because the tier reads back from one: the kind is up to the
first ``_`` (a kind has none). Two hashed suffixes differ unless blake2b-128 collides. Every
suffix is lowercase, so a schema typed unquoted in ``psql`` is the one meant (``Team`` is
hashed, apart from ``team``). Every schema is ``[A-Za-z_][A-Za-z0-9_]*`` within 63 bytes
(ASCII: a character is a byte); a hashed suffix takes 35 of them with its ``_``, so a
prefix longer than 28 characters is refused for a tier that needs one.

Which tier owns a schema is recorded in the schema's comment (``elastic-memory tier
pool:a-b``), written under the advisory lock that stores take to create schemas, when
:func:`settle` creates the schema or first opens it. A schema named by an earlier version
(:func:`legacy_schema_name`) is renamed to the tier's schema on open, when it is not
recorded as another tier's and every memory in it is the tier's (its ``scope`` and
``pool``). A schema holding another tier's memories is never opened as this tier's: that
tier is left out of the federation, with the reason in the log and ``health()``.
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

from ..errors import StorageError, UsageError
from ..storage.postgres.connect import LOCK_SPACE, first_line, psycopg_module, redact, split_url

__all__ = ["ServerTier", "legacy_schema_name", "schema_name", "server_prefix", "settle", "tier_url"]

log = logging.getLogger("elastic_memory.federation")

_MAX_BYTES = 63
_HASH_HEX = 32  # blake2b-128
_KIND = re.compile(r"[a-z]+")
_CLEAN_NAME = re.compile(r"[a-z0-9_]+")
_NOT_CLEAN = re.compile(r"[^a-z0-9]+")
_COMMENT = "elastic-memory tier "
_DEFAULT_PREFIX = "em"

#: The schemas asked for that exist, each with its comment (``NULL``: none).
_FIND = "SELECT n.nspname, obj_description(n.oid, 'pg_namespace') FROM pg_namespace AS n WHERE n.nspname = ANY(%s)"
_HAS_MEMORIES = (
    "SELECT 1 FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace "
    "WHERE n.nspname = %s AND c.relname = 'memories' AND c.relkind = 'r'"
)
#: One database-wide lock for creating schemas: :func:`~..storage.postgres._prepare` takes it too.
_LOCK = "SELECT pg_advisory_xact_lock(%s, 0)"


class ServerTier(NamedTuple):
    """A shared tier to open on a server: the server's URL and the tier (``"global"``, ``"pool:<name>"``)."""

    server: str
    tier: str


def server_prefix(server: str) -> tuple[str, str]:
    """``(libpq URL, prefix)``: the URL's ``?schema=`` is the prefix of its tiers' schemas (default ``em``).

    >>> server_prefix("postgresql://db/mem?schema=staging")
    ('postgresql://db/mem', 'staging')
    """
    base, prefix = split_url(server)
    given = any(k == "schema" for k, _ in parse_qsl(urlsplit(server).query))
    return base, prefix if given else _DEFAULT_PREFIX


def schema_name(prefix: str, tier: str) -> str:
    """The tier's schema under ``prefix`` (see the module's docstring for why it is injective).

    >>> schema_name("em", "pool:team")
    'em_pool_team'
    >>> schema_name("em", "pool:a-b")
    'em_pool_a_b__dfc0e88cae594e3813312b5cfdd42a98'
    >>> schema_name("em", "pool:a_b_8dfa"), schema_name("em", "global")
    ('em_pool_a_b_8dfa', 'em_global')

    Raises:
        UsageError: The tier needs a hashed suffix and the prefix leaves no room for it.
    """
    kind, colon, name = tier.partition(":")
    clean = f"{kind}_{name}" if colon else kind
    if (
        _KIND.fullmatch(kind)
        and (not colon or _CLEAN_NAME.fullmatch(name))
        and "__" not in clean
        and len(prefix) + 1 + len(clean) <= _MAX_BYTES
    ):
        return f"{prefix}_{clean}"
    room = _MAX_BYTES - len(prefix) - 1 - 2 - _HASH_HEX
    if room < 0:
        msg = (
            f"the schema prefix {prefix!r} leaves no room for tier {tier!r}'s schema (its name and a 32-digit hash); "
            f"use a ?schema= prefix of at most {_MAX_BYTES - 3 - _HASH_HEX} characters in the server URL"
        )
        raise UsageError(msg)
    readable = _NOT_CLEAN.sub("_", tier.lower())[:room].strip("_")
    digest = hashlib.blake2b(tier.encode(), digest_size=_HASH_HEX // 2).hexdigest()
    return f"{prefix}_{readable}__{digest}"


def legacy_schema_name(prefix: str, tier: str) -> str:
    """The schema earlier versions gave the tier (two tiers could share one).

    >>> legacy_schema_name("em", "pool:a-b"), legacy_schema_name("em", "pool:a_b_8dfa")
    ('em_pool_a_b_8dfa', 'em_pool_a_b_8dfa')
    """
    kind, _, name = tier.partition(":")
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name)
    schema = "_".join(p for p in (prefix, kind, safe) if p)
    if safe != name or len(schema) > _MAX_BYTES:
        schema = schema[:58] + "_" + hashlib.blake2b(name.encode(), digest_size=2).hexdigest()
    return schema


def tier_url(server: str, tier: str) -> str:
    """``server`` naming the tier's schema (:func:`schema_name` under :func:`server_prefix`)."""
    base, prefix = server_prefix(server)
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}schema={schema_name(prefix, tier)}"


def _owns(tier: str) -> tuple[str, str | None] | None:
    """The ``(scope, pool)`` of the tier's memories; ``None`` for a kind of tier that holds none."""
    kind, colon, name = tier.partition(":")
    if kind == "global" and not colon:
        return "global", None
    if kind == "pool" and colon:
        return "shared", name
    if kind == "agent" and colon:  # an agent's private tier on the server
        return "private", None
    return None


def _who(scope: str, pool: str | None) -> str:
    """Whose memories a ``(scope, pool)`` are, for messages."""
    if scope == "shared":
        return f"pool {pool!r}"
    return "the global tier" if scope == "global" else f"{scope} memories"


def _record(schema: str, tier: str) -> Any:
    """``COMMENT ON SCHEMA``: a utility statement takes no bound parameter, so the value is quoted client-side."""
    from psycopg import sql  # noqa: PLC0415 - optional: the postgres extra

    return sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(schema), sql.Literal(_COMMENT + tier))


def _rename(old: str, new: str) -> Any:
    from psycopg import sql  # noqa: PLC0415 - optional: the postgres extra

    return sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(sql.Identifier(old), sql.Identifier(new))


def _create(schema: str) -> Any:
    from psycopg import sql  # noqa: PLC0415 - optional: the postgres extra

    return sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema))


def _holders(schema: str) -> Any:
    """Whose memories the schema holds: each ``(scope, pool)`` once, deleted rows included."""
    from psycopg import sql  # noqa: PLC0415 - optional: the postgres extra

    return sql.SQL("SELECT DISTINCT scope, pool FROM {}.memories").format(sql.Identifier(schema))


def _owner(comment: str | None) -> str | None:
    return comment[len(_COMMENT) :] if comment is not None and comment.startswith(_COMMENT) else None


async def _held(conn: Any, schema: str) -> set[tuple[str, str | None]] | None:
    """Whose memories ``schema`` holds, as ``(scope, pool)``; ``None`` when it is no store (no ``memories``)."""
    if await (await conn.execute(_HAS_MEMORIES, [schema])).fetchone() is None:
        return None
    rows = await (await conn.execute(_holders(schema))).fetchall()
    return {(str(s), None if p is None else str(p)) for s, p in rows}


def _others(held: set[tuple[str, str | None]] | None, tier: str) -> list[str]:
    """Who else than the tier has memories there, sorted."""
    return sorted(_who(*h) for h in held or () if h != _owns(tier))


def _collision(schema: str, shown: str, tier: str, others: list[str]) -> StorageError:
    msg = (
        f"schema {schema!r} on {shown} holds the memories of {', '.join(others)} (an earlier elastic-memory named "
        f"their schemas alike), so it is not opened as tier {tier!r}; split it as 'Tier schemas' in "
        "docs/scaling-out.md says, or open that tier once with this version to move its memories out"
    )
    return StorageError(msg)


async def _settle(conn: Any, shown: str, tier: str, schema: str, legacy: str) -> None:
    """Inside the lock: make ``schema`` the tier's, recorded, moving its legacy schema there when that is the tier's."""
    found = {str(n): c for n, c in await (await conn.execute(_FIND, [[schema, legacy]])).fetchall()}
    if schema in found:
        owner = _owner(found[schema])
        if owner == tier:
            return
        if owner is not None:
            msg = (
                f"schema {schema!r} on {shown} is recorded as tier {owner!r}'s, not {tier!r}'s; if that is wrong, "
                f"correct its comment: COMMENT ON SCHEMA {schema} IS '{_COMMENT}{tier}'"
            )
            raise StorageError(msg)
        held = await _held(conn, schema)
        if others := _others(held, tier):
            raise _collision(schema, shown, tier, others)
        # Recorded once it is a store (not yet: a schema an administrator made empty, or holding
        # something else, which the store refuses); one an administrator commented on keeps the comment.
        if held is not None and found[schema] is None:
            try:
                async with conn.transaction():  # a savepoint: only the schema's owner may comment on it
                    await conn.execute(_record(schema, tier))
            except psycopg_module().Error as e:
                log.info("elastic-memory: schema %s on %s is not recorded as %s's: %s", schema, shown, tier, e)
        return
    if legacy != schema and legacy in found:
        owner = _owner(found[legacy])
        held = await _held(conn, legacy) if owner is None else None
        others = _others(held, tier)
        mine = owner == tier or (held is not None and _owns(tier) in held)
        if mine and not others:
            await conn.execute(_rename(legacy, schema))
            await conn.execute(_record(schema, tier))
            log.warning(
                "elastic-memory: renamed schema %s to %s on %s: tier %s's schema under the names of an earlier version",
                legacy,
                schema,
                shown,
                tier,
            )
            return
        if mine:  # the tier's memories and others' in one schema: not split here
            raise _collision(legacy, shown, tier, others)
    await conn.execute(_create(schema))
    await conn.execute(_record(schema, tier))


async def settle(server: str, tier: str, *, timeout: float = 5.0) -> str:
    """The tier's URL on ``server``, its schema created or moved from its legacy name and recorded as the tier's.

    Raises:
        UsageError: ``server``'s prefix cannot name the tier (:func:`schema_name`).
        StorageError: The server cannot be reached or refused, or the tier's schema (or its
            legacy schema) holds other tiers' memories: the message says what to do.
    """
    psycopg = psycopg_module()
    base, prefix = server_prefix(server)
    schema, legacy = schema_name(prefix, tier), legacy_schema_name(prefix, tier)
    url = tier_url(server, tier)
    shown = redact(base)
    try:
        conn = await psycopg.AsyncConnection.connect(base, autocommit=True, connect_timeout=max(1, int(timeout)))
    except psycopg.Error as e:
        msg = f"could not connect to {shown}: {first_line(e)}; check the URL, the server and PGPASSWORD"
        raise StorageError(msg) from e
    try:
        async with conn.transaction():
            await conn.execute(_LOCK, [LOCK_SPACE])
            await _settle(conn, shown, tier, schema, legacy)
    except psycopg.Error as e:
        msg = (
            f"could not prepare schema {schema!r} of tier {tier!r} on {shown}: {first_line(e)}; "
            "check the role's privileges"
        )
        raise StorageError(msg) from e
    finally:
        await conn.close()
    return url
