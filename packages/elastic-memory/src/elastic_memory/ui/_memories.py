"""Memories: search and browse with filters and paging, a record's page, edit, forget and restore."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..types import MemoryRecord, MemoryType, Scope
from ._links import memory_url, path_segments
from ._params import MAX_CONTENT, MAX_ID, BadRequest, Conflict, NotFound, choice, integer, json_object, number, text
from ._render import Inspector, render
from ._writes import done, is_read, notice, refuse_read_only, write_form

__all__ = ["ROUTES"]

MODES = ("hybrid", "keyword", "semantic")
STATES = ("live", "archived", "deleted", "all")
#: How the edit form shows a memory's tags (and splits them back).
TAG_SEPARATOR = ", "
#: What ``/memories/{id}/...`` does to a memory.
ACTIONS = ("edit", "forget", "restore")
SIZES = (20, 50, 100)
#: Search pages reach at most this many results (recall's ``k``).
MAX_RESULTS = 1000


def _filters(params: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """recall/list filters from the query string, and the form's values to show again."""
    kind = choice(params, "type", ("", *(t.value for t in MemoryType)), "")
    scope = choice(params, "scope", ("", *(s.value for s in Scope)), "")
    tag = text(params, "tag", limit=200).strip()
    session = text(params, "session", limit=MAX_ID).strip()
    floor = number(params, "min_importance", low=0.0, high=1.0)
    filters: dict[str, Any] = {}
    if kind:
        filters["type"] = kind
    if scope:
        filters["scope"] = scope
    if tag:
        filters["tags"] = [tag]
    if session:
        filters["session_id"] = session
    if floor is not None:
        filters["min_importance"] = floor
    shown = {
        "type": kind,
        "scope": scope,
        "tag": tag,
        "session": session,
        "min_importance": params.get("min_importance", ""),
    }
    return filters, shown


async def search(request: Request) -> Response:
    """``GET /`` and ``GET /search?q=...``: results of recall, or every memory page by page when q is empty."""
    inspector: Inspector = request.app.state.inspector
    params = request.query_params
    query = text(params, "q", limit=2000).strip()
    mode = choice(params, "mode", MODES, "hybrid")
    state = choice(params, "state", STATES, "live")
    size = integer(params, "size", 20, low=1, high=100)
    page = integer(params, "page", 1, low=1, high=MAX_RESULTS)
    after = text(params, "after", limit=200) or None
    filters, shown = _filters(params)
    rows: list[dict[str, Any]] = []
    next_link: dict[str, str] | None = None
    base = {"q": query, "mode": mode, "state": state, "size": str(size), **shown}
    if query:
        k = min(page * size, MAX_RESULTS)
        if (page - 1) * size >= k:
            msg = f"page {page} is past the last result a search shows ({MAX_RESULTS}); narrow the query"
            raise BadRequest(msg)
        hits = await inspector.mem.recall(query, k=k, mode=mode, filters=filters or None, touch=False)
        rows = [_hit_row(h) for h in hits[(page - 1) * size :]]
        if len(hits) == k and k < MAX_RESULTS:
            next_link = {**base, "page": str(page + 1)}
    else:
        listed = await inspector.mem.list(filters or None, state=state, limit=size, after=after)
        rows = [_record_row(r) for r in listed.records]
        if listed.next is not None:
            next_link = {**base, "after": listed.next}
    return render(
        request,
        "memories.html",
        rows=rows,
        query=query,
        mode=mode,
        state=state,
        size=size,
        page=page,
        form=base,
        next_link=next_link,
        modes=MODES,
        states=STATES,
        types=[t.value for t in MemoryType],
        scopes=[s.value for s in Scope],
        sizes=SIZES,
    )


def _hit_row(hit: Any) -> dict[str, Any]:
    return {
        "id": hit.id,
        "content": hit.content,
        "score": hit.score,
        "type": hit.type.value,
        "tags": hit.tags,
        "importance": hit.importance,
        "created_at": hit.created_at,
        "state": "live",
    }


def _record_row(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "content": record.content,
        "score": None,
        "type": record.type.value,
        "tags": record.tags,
        "importance": record.importance,
        "created_at": record.created_at,
        "state": _state(record),
    }


def _state(record: MemoryRecord) -> str:
    if record.deleted_at is not None:
        return "deleted"
    return "archived" if record.archived else "live"


async def _record(request: Request, mid: str) -> MemoryRecord:
    inspector: Inspector = request.app.state.inspector
    mid = text({"id": mid}, "id", limit=MAX_ID)
    if not mid:
        msg = "the address names no memory: a memory's page is /memories/ID"
        raise NotFound(msg)
    record = await inspector.mem.get(mid)
    if record is None:
        msg = f"no memory with id {mid!r}"
        raise NotFound(msg)
    return record


def _target(request: Request) -> tuple[str, str]:
    """The memory id and the action (``""`` for its page) the address names.

    The id is one percent-encoded segment (``/`` in it written ``%2F``), decoded once; the ids
    ``.`` and ``..``, which no browser keeps in a path, come as ``/memories/?id=..&action=edit``.
    """
    parts = path_segments(request, "/memories/")
    if parts == [""]:
        params = request.query_params
        return text(params, "id", limit=MAX_ID), text(params, "action", limit=20)
    return parts[0], "/".join(parts[1:])


async def memory(request: Request) -> Response:
    """``/memories/{id}`` and ``/memories/{id}/edit``, ``/forget``, ``/restore`` (the id percent-encoded)."""
    mid, action = _target(request)
    if action == "edit":
        return await edit(request, mid)
    if action in ACTIONS:
        return await confirm(request, mid, action)
    if action:
        msg = (
            f"a memory has no page {action!r}: its actions are {', '.join(ACTIONS[:-1])} and {ACTIONS[-1]} "
            "(write a '/' inside an id as %2F)"
        )
        raise NotFound(msg)
    if not is_read(request):
        raise HTTPException(405)
    return await record_page(request, mid)


async def record_page(request: Request, mid: str) -> Response:
    """``GET /memories/{id}``: content, metadata, tags, access counts, its history and its graph edges."""
    inspector: Inspector = request.app.state.inspector
    record = await _record(request, mid)
    edges = await inspector.mem.graph.edges(record.id)
    history = sorted(
        (at, what)
        for at, what in (
            (record.created_at, "written"),
            (record.updated_at if record.updated_at != record.created_at else None, "last changed"),
            (record.accessed_at if record.access_count else None, "last recalled"),
            (record.deleted_at, "forgotten (soft delete)"),
            (record.expires_at, "expires"),
        )
        if at is not None
    )
    return render(
        request,
        "record.html",
        record=record,
        state=_state(record),
        edges=edges,
        history=history,
        notice=notice(request),
    )


async def edit(request: Request, mid: str) -> Response:
    """``GET/POST /memories/{id}/edit``: change content, importance, confidence, tags, metadata, pinned."""
    refuse_read_only(request)
    record = await _record(request, mid)
    if is_read(request):
        return render(request, "edit.html", record=record, tag_separator=TAG_SEPARATOR)
    fields = await write_form(request)
    inspector: Inspector = request.app.state.inspector
    shown = fields.get("version")
    if shown is not None and shown != str(record.updated_at):  # the form's hidden copy of updated_at
        msg = "the memory changed since this form was opened (the agent wrote to it): reload the form and edit again"
        raise Conflict(msg)
    changes = _changes(record, fields)
    if changes:
        await inspector.mem.update(record.id, **changes)
    return done(memory_url(record.id), "saved")


def _changes(record: MemoryRecord, fields: dict[str, str]) -> dict[str, Any]:
    """The fields the edit form changed: one left as shown is not written (a tag holding a comma stays whole).

    Raises:
        BadRequest: a value is out of range or malformed, or the content is empty; nothing is written.
    """
    posted: dict[str, Any] = {
        "content": text(fields, "content", limit=MAX_CONTENT).strip(),
        "importance": number(fields, "importance", low=0.0, high=1.0),
        "confidence": number(fields, "confidence", low=0.0, high=1.0),
        "metadata": json_object(text(fields, "metadata", limit=MAX_CONTENT), "metadata"),
        "pinned": fields.get("pinned") == "on",
    }
    if not posted["content"]:
        msg = "content cannot be empty; to remove the memory, forget it"
        raise BadRequest(msg)
    tags = text(fields, "tags", limit=MAX_CONTENT).strip()
    if tags != TAG_SEPARATOR.join(record.tags):  # as edit.html shows them
        posted["tags"] = [t.strip() for t in tags.split(",") if t.strip()]
    current = {
        "content": record.content.strip(),
        "importance": record.importance,
        "confidence": record.confidence,
        "metadata": record.metadata,
        "pinned": record.pinned,
        "tags": record.tags,
    }
    return {name: value for name, value in posted.items() if value is not None and value != current[name]}


async def confirm(request: Request, mid: str, action: str) -> Response:
    """``GET/POST /memories/{id}/forget`` and ``.../restore``: a confirmation page, then the change."""
    refuse_read_only(request)
    record = await _record(request, mid)
    if is_read(request):
        return render(request, "confirm.html", record=record, action=action, state=_state(record))
    await write_form(request)
    inspector: Inspector = request.app.state.inspector
    if action == "forget":
        await inspector.mem.forget(record.id)
        return done(memory_url(record.id), "forgotten")
    await inspector.mem.restore(record.id)
    return done(memory_url(record.id), "restored")


ROUTES = [
    Route("/", search, name="home"),
    Route("/search", search, name="search"),
    Route("/memories/{rest:path}", memory, methods=["GET", "POST"], name="memory"),
]
