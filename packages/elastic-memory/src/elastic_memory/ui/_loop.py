"""The memory loop's tables: facts with their versions, lessons, quarantine review, sessions and transcripts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..maintenance.owners import hint_others
from ..types import MemoryRecord, QuarantinedItem
from ._links import path_segments
from ._params import MAX_ID, BadRequest, NotFound, integer, text
from ._render import Inspector, render
from ._writes import done, is_read, notice, refuse_read_only, write_form

if TYPE_CHECKING:
    from ..facade.async_memory import AsyncMemory

__all__ = ["ROUTES"]

#: The sessions page reads at most this many memories of its window (pages of 1000).
SESSION_SCAN = 5000
#: The quarantine page looks up the source turns of at most this many sessions.
SOURCE_SESSIONS = 20
#: A transcript shows at most this many memories of one session.
TRANSCRIPT_LIMIT = 1000


def _inspector(request: Request) -> Inspector:
    inspector: Inspector = request.app.state.inspector
    return inspector


async def facts(request: Request) -> Response:
    """``GET /facts``: the current facts, narrowed by category or a key substring."""
    params = request.query_params
    category = text(params, "category", limit=200).strip() or None
    key = text(params, "key", limit=200).strip()
    mem = _inspector(request).mem
    found = await mem.facts.list(category=category)
    shown = [f for f in found if key.casefold() in f.key.casefold()]
    others = None
    if not found and category is None and mem.path != ":memory:":  # say who holds the facts of this file
        others = await asyncio.to_thread(hint_others, Path(mem.path), "facts", mem.agent_id, mem.user_id)
    return render(request, "facts.html", facts=shown, category=category or "", key=key, others=others)


async def fact(request: Request) -> Response:
    """``GET /facts/{key}``: every version of a fact with its validity and recording times."""
    key = text(request.path_params, "key", limit=500)
    history = await _inspector(request).mem.facts.history(key)
    if not history:
        msg = f"no fact with key {key!r}"
        raise NotFound(msg)
    return render(request, "fact.html", key=key, history=list(history))


async def lessons(request: Request) -> Response:
    """``GET /lessons``: the operational lessons every plan shows; ``POST`` adds one."""
    inspector = _inspector(request)
    if request.method == "POST":
        fields = await write_form(request)
        lesson = text(fields, "text", limit=2000).strip()
        if not lesson:
            msg = "a lesson needs its text, such as 'Use metric units.'"
            raise BadRequest(msg)
        await inspector.mem.lessons.add(lesson)
        return done("/lessons", "lesson")
    found = await inspector.mem.lessons.list()
    return render(request, "lessons.html", lessons=found, notice=notice(request))


async def quarantine(request: Request) -> Response:
    """``GET /quarantine``: what the guards refused, with the reason and the source turn."""
    limit = integer(request.query_params, "limit", 100, low=1, high=1000)
    items = await _inspector(request).mem.quarantine(limit)
    turns = await _source_turns(_inspector(request), items)
    return render(request, "quarantine.html", items=items, turns=turns, notice=notice(request))


async def _source_turns(inspector: Inspector, items: list[QuarantinedItem]) -> dict[tuple[str, int], MemoryRecord]:
    """The recorded exchange each item came from, by (session, turn): one read per session (20 at most)."""
    wanted: dict[str, set[int]] = {}
    for item in items:
        if item.session_id is not None and item.turn_seq is not None:
            wanted.setdefault(item.session_id, set()).add(item.turn_seq)
    found: dict[tuple[str, int], MemoryRecord] = {}
    for sid, seqs in list(wanted.items())[:SOURCE_SESSIONS]:
        where = {"session_id": sid, "metadata": {"turn": {"$in": sorted(seqs)}}, **_own(inspector.mem)}
        page = await inspector.mem.list(where, state="all", limit=min(1000, 4 * len(seqs)))
        for record in page.records:
            seq = record.metadata.get("turn")
            if isinstance(seq, int):
                found.setdefault((sid, seq), record)
    return found


def _own(mem: AsyncMemory) -> dict[str, Any]:
    """The filter of the inspected handle's own rows: sessions of two users (or agents) of one name never merge."""
    return {"agent_id": mem.agent_id, "user_id": mem.user_id}


async def _item(request: Request) -> QuarantinedItem:
    item_id = integer(request.path_params, "id", 0, low=1, high=2**62)
    for item in await _inspector(request).mem.quarantine(1000):
        if item.id == item_id:
            return item
    msg = f"no quarantined item {item_id} (released or discarded already?)"
    raise NotFound(msg)


async def review(request: Request) -> Response:
    """``GET/POST /quarantine/{id}/release`` and ``.../discard``: confirm, then write it or drop it."""
    action = request.path_params["action"]
    if action not in ("release", "discard"):
        msg = "a quarantined item can be released or discarded"
        raise NotFound(msg)
    refuse_read_only(request)
    item = await _item(request)
    if is_read(request):
        return render(request, "review.html", item=item, action=action)
    await write_form(request)
    mem = _inspector(request).mem
    if action == "release":
        await mem.release_quarantined(item.id)
        return done("/quarantine", "released", item=item.id)
    await mem.discard_quarantined(item.id)
    return done("/quarantine", "discarded", item=item.id)


def _sessions(records: list[MemoryRecord]) -> list[dict[str, Any]]:
    by_session: dict[str, list[MemoryRecord]] = {}
    for record in records:
        if record.session_id is not None:
            by_session.setdefault(record.session_id, []).append(record)
    rows = [
        {
            "id": sid,
            "memories": len(rows),
            "first_at": min(r.created_at for r in rows),
            "last_at": max(r.created_at for r in rows),
            "summary": next((r.content for r in rows if r.kind == "summary"), None),
        }
        for sid, rows in by_session.items()
    ]
    return sorted(rows, key=lambda s: s["last_at"], reverse=True)


async def sessions(request: Request) -> Response:
    """``GET /sessions?days=7``: the sessions that left memories in the window, newest first."""
    mem = _inspector(request).mem
    days = integer(request.query_params, "days", 7, low=1, high=3650)
    since = mem.clock() - days * 86_400
    records: list[MemoryRecord] = []
    after: str | None = None
    while len(records) < SESSION_SCAN:
        page = await mem.list({"since": since, **_own(mem)}, state="all", limit=1000, after=after)
        records.extend(page.records)
        after = page.next
        if after is None:
            break
    return render(request, "sessions.html", sessions=_sessions(records), days=days, capped=after is not None)


async def transcript(request: Request) -> Response:
    """``GET /sessions/{id}``: a session's memories in the order written (turns, chunks, summaries).

    The id is percent-encoded (``/`` as ``%2F``); the ids ``.`` and ``..`` come as ``/sessions/?id=..``.
    """
    sid = "/".join(path_segments(request, "/sessions/"))
    sid = text({"id": sid or request.query_params.get("id", "")}, "id", limit=MAX_ID)
    mem = _inspector(request).mem
    page = await mem.list({"session_id": sid, **_own(mem)}, state="all", limit=TRANSCRIPT_LIMIT)
    if not page.records:
        msg = f"no session {sid!r} in this store"
        raise NotFound(msg)
    return render(request, "session.html", session_id=sid, records=page.records, capped=page.next is not None)


ROUTES = [
    Route("/facts", facts, name="facts"),
    Route("/facts/{key:path}", fact, name="fact"),
    Route("/lessons", lessons, methods=["GET", "POST"], name="lessons"),
    Route("/quarantine", quarantine, name="quarantine"),
    Route("/quarantine/{id}/{action:str}", review, methods=["GET", "POST"], name="review"),
    Route("/sessions", sessions, name="sessions"),
    Route("/sessions/{id:path}", transcript, name="session"),
]
