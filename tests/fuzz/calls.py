"""What each public method is fuzzed with: a strategy of ``(args, kwargs)`` per method name.

Names are attribute paths on a store (``"recall"``, ``"facts.set"``, ``"graph.add_edges"``);
the same table drives the sync and the async facade. ``UNFUZZED`` lists the public names
that take no hostile input, with the reason; ``test_every_public_method_is_fuzzed`` keeps
the two complete.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from elastic_memory import PrunePolicy
from elastic_memory.types import Edge

from . import strategies as hs
from .harness import Seeds

Call = tuple[tuple[Any, ...], dict[str, Any]]

#: Public names that are not fuzzed, and why.
UNFUZZED = {
    "close": "takes no argument; every test ends with it",
    "as_async": "takes no argument; the async facade is fuzzed through it",
    "as_sync": "takes no argument; the sync facade is fuzzed through it",
    "foreground": "a context manager without arguments",
    "federation": "a property",
    "path": "a property",
    "agent_id": "a property",
    "user_id": "a property",
    "clock": "a property",
    "recall_config": "a property",
    "facts": "a sub-API, fuzzed as facts.*",
    "graph": "a sub-API, fuzzed as graph.*",
    "lessons": "a sub-API, fuzzed as lessons.*",
    "open": "fuzzed by test_open_* (no store exists before it)",
    "for_agent": "fuzzed by test_open_* (no store exists before it)",
}

_counter = itertools.count()


def confined(folder: Path, name: Any) -> Any:
    """``folder/name`` for hostile text that stays inside ``folder``; other values as they are."""
    if not isinstance(name, str):
        return name
    cleaned = name.lstrip("/\\~").replace("~", "_")
    candidate = folder / "a" / "b" / cleaned
    try:
        inside = os.path.normpath(candidate).startswith(str(folder))
    except ValueError:
        inside = True  # NUL: open() refuses it before touching the disk
    return candidate if inside and cleaned else folder / f"plain-{next(_counter)}.jsonl"


def _file(folder: Path, data: bytes) -> Path:
    path = folder / f"import-{next(_counter)}.jsonl"
    path.write_bytes(data)
    return path


def _jsonl_bytes() -> st.SearchStrategy[bytes]:
    """What an import file holds: garbage, deep JSON, non-UTF-8, records with hostile fields."""
    record = st.fixed_dictionaries(
        {"content": hs.short_text()},
        optional={
            "id": hs.names(),
            "tags": hs.tag_lists(),
            "importance": hs.floats(),
            "metadata": hs.json_values(),
            "type": hs.names(),
            "created_at": hs.floats(),
            "vector": hs.vectors(),
        },
    ).map(_dumps)
    return st.one_of(
        st.binary(max_size=200),
        st.sampled_from(
            [
                b"[" * 100_000,
                b"{" * 100_000,
                b"\xff\xfe\x00garbage",
                b"not json\n",
                b"null\n",
                b"[]\n",
                b'{"content": "a"}\n' * 3,
                b'{"content": "\\ud800"}\n',
                b'{"content": "x", "id": "\\u0000"}\n',
                b'{"content": 1}\n',
                b"\n\n\n",
                b"",
                ("[" * hs.DEEP + "]" * hs.DEEP).encode(),
            ]
        ),
        st.lists(record, min_size=1, max_size=3).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")),
        _v2_bytes(),
    )


def _v2_bytes() -> st.SearchStrategy[bytes]:
    """A format 2 file: a header (its pin hostile at times), then records of any type with hostile fields."""
    from elastic_memory.maintenance.tables import TABLES

    kinds = ["memory", "end", *(t.record for t in TABLES)]
    columns = sorted({c for t in TABLES for c in t.columns})
    header = st.fixed_dictionaries(
        {"record": st.just("header"), "format": st.just("elastic-memory-export"), "version": st.just(2)},
        optional={
            "pin": st.one_of(
                st.none(),
                hs.json_values(),
                st.fixed_dictionaries({"model_id": hs.names(), "dimension": hs.json_values(), "family": hs.names()}),
            )
        },
    )
    value = st.one_of(hs.json_values(), hs.floats(), hs.short_text(), st.integers(min_value=-(2**70), max_value=2**70))
    line = st.builds(
        lambda kind, fields, counts: {"record": kind, **fields, **({"counts": counts} if kind == "end" else {})},
        st.one_of(st.sampled_from(kinds), hs.names()),
        st.dictionaries(st.sampled_from([*columns, "content", "vector", "created_at", "id"]), value, max_size=12),
        st.one_of(hs.json_values(), st.dictionaries(st.sampled_from(kinds), st.integers(-5, 5), max_size=4)),
    )
    return st.tuples(header, st.lists(line, max_size=4)).map(
        lambda parts: "\n".join(_dumps(x) for x in [parts[0], *parts[1]]).encode("utf-8", "surrogatepass")
    )


def _dumps(record: dict[str, Any]) -> str:
    import json

    try:
        return json.dumps(record, default=repr, allow_nan=True)
    except (ValueError, RecursionError):
        return '{"content": "x"}'


def kwargs_of(**optional: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=optional)


def filters() -> st.SearchStrategy[Any]:
    """Recall filters: real keys with hostile values, unknown keys, hostile metadata operators."""
    op = st.sampled_from(
        [
            "$eq",
            "$ne",
            "$gt",
            "$gte",
            "$lt",
            "$lte",
            "$in",
            "$nin",
            "$exists",
            "$contains",
            "$icontains",
            "$empty",
            "$like",
            "$ilike",
            "$between",
            "$regex",
            "$where",
            "gt",
            "$",
        ]
    )
    meta_cond = st.dictionaries(
        hs.short_text(12), st.one_of(hs.json_values(), st.dictionaries(op, hs.any_value(), max_size=2)), max_size=3
    )
    logic = st.sampled_from(["$and", "$or", "$not"]).flatmap(
        lambda k: st.builds(lambda v: {k: v}, st.one_of(st.lists(meta_cond, max_size=3), meta_cond, hs.bad_scalars()))
    )
    deep_logic = st.sampled_from([10, 33, 200, 2_000]).map(lambda d: {"metadata": _nest_not(d)})
    real = st.fixed_dictionaries(
        {},
        optional={
            "agent_id": hs.names(),
            "user_id": st.one_of(hs.names(), st.lists(hs.names(), max_size=3)),
            "scope": hs.names(),
            "pool": hs.names(),
            "type": st.one_of(hs.names(), st.lists(hs.names(), max_size=3)),
            "source": hs.names(),
            "session_id": hs.names(),
            "tags": hs.tag_lists(),
            "tags_all": hs.tag_lists(),
            "min_confidence": hs.floats(),
            "min_importance": hs.floats(),
            "since": st.one_of(hs.floats(), hs.short_text()),
            "until": st.one_of(hs.floats(), hs.short_text()),
            "pinned": hs.any_value(),
            "metadata": st.one_of(meta_cond, logic, hs.bad_scalars()),
        },
    )
    return st.one_of(
        real,
        deep_logic,
        st.dictionaries(hs.short_text(12), hs.any_value(), max_size=3),
        hs.metadata(),
        st.sampled_from([{"metadata": {"$or": [{"n": i} for i in range(2_000)]}}]),
    )


def _nest_not(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"n": 1}
    for _ in range(depth):
        value = {"$not": value}
    return value


def edges() -> st.SearchStrategy[Any]:
    edge = st.builds(Edge, hs.names(), hs.names(), hs.names(), hs.names(), hs.floats())
    return st.one_of(st.lists(st.one_of(edge, hs.bad_scalars()), max_size=4), hs.bad_scalars(), hs.short_text())


def calls(seeds: Seeds, folder: Path, dim: int) -> dict[str, st.SearchStrategy[Call]]:
    """Every fuzzed method's ``(args, kwargs)`` strategy, for a store seeded with ``seeds``."""
    one_id = st.one_of(st.sampled_from(seeds.ids), hs.names())
    many_ids = st.one_of(one_id, st.lists(one_id, max_size=4), st.just(["x"] * 5_000), hs.bad_scalars())
    key = st.one_of(st.sampled_from(seeds.keys or ["user.dog_name"]), hs.names())
    name = st.one_of(st.sampled_from(seeds.names or ["Biscuit"]), hs.names())
    session = st.one_of(st.just("s1"), hs.names())
    item = st.one_of(st.sampled_from(seeds.quarantined or [1]), hs.ints())
    text = hs.hostile_text(huge=True)
    messages = st.one_of(
        st.lists(
            st.one_of(
                hs.short_text(),
                st.fixed_dictionaries({"role": hs.names(), "content": hs.any_value()}),
                hs.bad_scalars(),
            ),
            max_size=4,
        ),
        hs.bad_scalars(),
        hs.short_text(),
    )
    query_kwargs = dict(
        k=hs.limits(),
        mode=st.one_of(st.sampled_from(["keyword", "semantic", "hybrid"]), hs.names()),
        filters=filters(),
        scope=hs.names(),
        pool=hs.names(),
        vector=hs.vectors(dim),
        vector_weight=hs.floats(),
    )
    remember_fields = dict(
        id=hs.names(),
        type=hs.names(),
        importance=hs.floats(),
        confidence=hs.floats(),
        source=hs.names(),
        tags=hs.tag_lists(),
        metadata=hs.metadata(),
        agent_id=hs.names(),
        scope=hs.names(),
        pool=hs.names(),
        session_id=hs.names(),
        pinned=hs.any_value(),
        ttl=hs.floats(),
        expires_at=st.one_of(hs.floats(), hs.short_text()),
        dedupe=hs.any_value(),
        user_id=hs.names(),
    )
    items = st.one_of(
        st.lists(
            st.one_of(
                hs.short_text(),
                st.fixed_dictionaries({"content": hs.short_text()}, optional=remember_fields),
                hs.bad_scalars(),
            ),
            max_size=4,
        ),
        hs.bad_scalars(),
        hs.short_text(),
    )
    export_path = st.one_of(
        hs.names().map(lambda n: confined(folder, n)),
        st.sampled_from([folder, None, folder / "missing" / "x.jsonl", str(folder), folder / "ok.jsonl"]),
    )
    import_path = st.one_of(
        _jsonl_bytes().map(lambda b: _file(folder, b)),
        st.sampled_from([folder, None, folder / "missing.jsonl", b"bytes-path"]),
        hs.names().map(lambda n: confined(folder, n)),
    )
    prune_policy = st.one_of(
        st.none(),
        hs.bad_scalars(),
        st.builds(_policy, hs.floats(), hs.ints()),
    )
    no_args: st.SearchStrategy[Call] = st.just(((), {}))

    def pos(*args: st.SearchStrategy[Any], **kw: st.SearchStrategy[Any]) -> st.SearchStrategy[Call]:
        return st.tuples(st.tuples(*args), kwargs_of(**kw))

    return {
        "remember": pos(text, **remember_fields),
        "remember_many": pos(
            items, dedupe=hs.any_value(), vectors=st.one_of(st.lists(hs.vectors(dim), max_size=4), hs.vectors(dim))
        ),
        "recall": pos(text, touch=hs.any_value(), **query_kwargs),
        "explain": pos(text, **query_kwargs),
        "get": pos(one_id),
        "for_user": pos(hs.names()),
        "get_many": pos(many_ids),
        "list": pos(
            st.one_of(st.none(), filters()),
            state=st.one_of(st.sampled_from(["live", "archived", "deleted", "all"]), hs.any_value()),
            limit=hs.limits(),
            after=st.one_of(st.none(), st.sampled_from(["seq:1", "seq:0", "seq:-1", "seq:", "1"]), hs.any_value()),
        ),
        "update": st.tuples(
            st.tuples(one_id),
            kwargs_of(
                content=text,
                tags=hs.tag_lists(),
                metadata=hs.metadata(),
                importance=hs.floats(),
                pinned=hs.any_value(),
                type=hs.names(),
                source=hs.names(),
                bogus=hs.any_value(),
                expires_at=hs.floats(),
                session_id=hs.names(),
            ),
        ),
        "forget": pos(many_ids, hard=hs.any_value()),
        "restore": pos(many_ids),
        "archive": pos(many_ids, archived=hs.any_value()),
        "purge": pos(hs.floats(), ids=st.one_of(st.none(), many_ids)),
        "prune": pos(
            prune_policy, min_importance=hs.floats(), max_entries=hs.ints(), action=hs.names(), dry_run=hs.any_value()
        ),
        "stats": no_args,
        "load_index": no_args,
        "embed_query": pos(text),
        "tags": pos(filters=filters(), prefix=hs.names()),
        "vectors": pos(many_ids),
        "generation": no_args,
        "export_jsonl": pos(export_path, vectors=hs.any_value()),
        "import_jsonl": pos(import_path),
        "build_context": pos(text, session_id=session, touch=hs.any_value()),
        "record_turn": pos(text, hs.hostile_text(), session_id=session, metadata=hs.metadata()),
        "report_evictions": pos(session, messages),
        "tick": no_args,
        "drain": no_args,
        "end_session": pos(session),
        "consolidate": no_args,
        "health": no_args,
        "check": pos(full=hs.any_value()),
        "quarantine": pos(hs.limits()),
        "release_quarantined": pos(item),
        "discard_quarantined": pos(item),
        "facts.set": pos(
            key,
            hs.any_value(),
            category=hs.names(),
            valid_from=hs.any_value(),
            importance=hs.floats(),
            source=hs.any_value(),
        ),
        "facts.get": pos(key, as_of=hs.any_value()),
        "facts.history": pos(key),
        "facts.forget": pos(key),
        "facts.list": pos(category=hs.names()),
        "lessons.add": pos(text, importance=hs.floats(), source=hs.any_value()),
        "lessons.list": no_args,
        "graph.entities": pos(hs.limits()),
        "graph.nodes": pos(hs.limits()),
        "graph.entity": pos(name),
        "graph.relations": pos(st.one_of(st.none(), name), hs.limits()),
        "graph.traverse": pos(name, hs.ints(), st.one_of(st.none(), hs.names()), hs.limits()),
        "graph.alias": pos(name, hs.names()),
        "graph.path": pos(name, name, hs.ints()),
        "graph.neighbors": pos(one_id, st.one_of(st.none(), hs.names())),
        "graph.edges": pos(one_id),
        "graph.add_edges": pos(edges()),
        "graph.replace_source": pos(hs.names(), edges()),
        "graph.stats": no_args,
        "graph.clusters": pos(hs.limits()),
    }


def _policy(min_importance: Any, max_entries: Any) -> Any:
    try:
        return PrunePolicy(min_importance=min_importance, max_entries=max_entries)
    except Exception:  # the policy's own validation: hand the raw values over instead
        return {"min_importance": min_importance, "max_entries": max_entries}


METHODS = sorted(calls(Seeds(["x"], [], [], []), Path("/nonexistent"), 16))
SUB_APIS = ("facts", "lessons", "graph")
