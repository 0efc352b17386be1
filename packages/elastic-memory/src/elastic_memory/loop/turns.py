"""``record_turn``'s write path: one exchange stored verbatim and condensed, its facts captured by rules.

The text is screened and chunked, the heuristic extractor runs (no model), and one
transaction writes the turn, its chunks, facts, quarantine and graph rows; what is slow
(llm extraction, embedding, screening a long turn, summaries) is queued for the worker.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import _validate as v
from ..errors import UsageError
from ..extraction import Turn
from ..extraction.flags import FLAG_KEY, SPLIT_CHARS, UNSCREENED, split_flag, turn_flag, withhold
from ..graph import ngrams
from ..graph.writes import graph_write, known_in
from ..types import TurnReceipt
from . import jobs
from .chunking import split_exchange
from .inputs import DEFAULT_SESSION, as_session, as_text
from .writes import Written, fact_write, memory_rows, quarantined

if TYPE_CHECKING:
    from .engine import MemoryLoop

__all__ = [
    "CHUNKED_CHARS",
    "CONSOLIDATE_EVERY",
    "INLINE_CHARS",
    "SCREENED_INLINE",
    "after_turn",
    "host_metadata",
    "record_turn",
    "remember_said",
]

#: Characters of each side of a turn the inline extraction reads (the transcript keeps all).
INLINE_CHARS = 2_000
#: Characters of each side of a turn condensed into chunks (at most 32 are indexed anyway); all are screened.
CHUNKED_CHARS = 40_000
#: Characters of each side of a turn screened on the write path; the chunks of a longer turn are
#: withheld from plans (``em_flagged="unscreened"``) until the worker has screened all of it.
SCREENED_INLINE = INLINE_CHARS
#: Sessions whose last user message is kept in memory, to read an instruction split over two turns.
_SPLIT_SESSIONS = 256
#: Turns between consolidation sweeps when sessions do not end (one long-lived session).
CONSOLIDATE_EVERY = 200


async def record_turn(loop: MemoryLoop, user: Any, reply: Any, session_id: Any, metadata: Any) -> TurnReceipt:
    """Store one exchange; never raises (a failure is an error receipt, counted in ``health()``)."""
    session = DEFAULT_SESSION
    try:
        session = as_session(session_id)
        user_text, reply_text = as_text(user), as_text(reply)
        if not user_text.strip() and not reply_text.strip():
            return TurnReceipt(ok=True, session_id=session)
        extra = host_metadata(loop, metadata)
        profile = loop.profile
        now = loop.core.store.clock()
        # Rules and cues only, no model; bounded text keeps the write path in milliseconds.
        turn = Turn(user=user_text[:INLINE_CHARS], reply=reply_text[:INLINE_CHARS], session_id=session)
        found = loop.heuristic.extract(turn)
        flag = turn_flag(user_text[:SCREENED_INLINE], reply_text[:SCREENED_INLINE])
        before = loop.said.get((loop.jobs_prefix, session), ())
        said_before = " ".join(tail for tail, _ in before)
        split = split_flag(said_before, user_text) if flag is None and said_before.strip() else None
        flag = flag or split
        earlier = before if split is not None else ()  # only a split's first parts are withdrawn
        later = flag is None and max(len(user_text), len(reply_text)) > SCREENED_INLINE
        if flag is not None:  # kept verbatim, never trusted: its candidates go to the quarantine
            found = withhold(found, flag)
            extra = {**extra, FLAG_KEY: flag}
        elif later:  # withheld from plans until the worker has read all of it
            extra = {**extra, FLAG_KEY: UNSCREENED}
        importance = found.episode_importance
        chunks = split_exchange(
            user_text[:CHUNKED_CHARS],
            reply_text[:CHUNKED_CHARS],
            target_tokens=profile.chunk_target_tokens,
            count=loop.count,
        )
        rows = [
            v.build_row(
                text,
                now=now,
                default_agent=loop.agent_id,
                type="episodic",
                importance=importance,
                source="agent",
                session_id=session,
                metadata={**extra, **({"part": i} if i else {})},
                kind="chunk",
            )
            for i, text in enumerate(chunks)
        ]
        rows += memory_rows(loop.agent_id, found, session, now)
        facts = [fact_write(f, session, now) for f in found.facts]
        quarantine = quarantined(found.rejected, session, now)
        said = f"{turn.user}\n{turn.reply}"
        known = known_in(said, await loop.store.graph.detect(loop.agent_id, ngrams(said, limit=400)))
        number, ids, outcomes = await loop.store.record_turn(
            agent_id=loop.agent_id,
            session_id=session,
            user=user_text,
            reply=reply_text,
            importance=importance,
            rows=rows,
            facts=facts,
            quarantine=quarantine,
            extracted=not loop.llm_extraction_due(),
            graph=graph_write(found, known),
        )
        loop.last_turn_at = time.monotonic()
        chunk_ids = tuple(ids[: len(chunks)])
        created = tuple(f.key for f, outcome in outcomes if outcome == "created")
        written: Written = (chunk_ids, tuple(ids[len(chunks) :]), created)
        remember_said(loop, session, None if flag is not None else user_text, written)
        for _, wrote in earlier:  # the first parts of a split were stored as clean: distrust them
            await loop.distrust(wrote, flag or "instruction")
        if later:
            loop.submit(
                "screen",
                f"screen:{len(session)}:{session}:{number}",
                lambda: jobs.screen_turn(loop, written, user_text[:CHUNKED_CHARS], reply_text[:CHUNKED_CHARS]),
                critical=True,
                defer=True,
            )
        after_turn(loop, session)
        return TurnReceipt(
            ok=True,
            session_id=session,
            turn=number,
            chunk_ids=chunk_ids,
            facts=tuple(f.key for f, outcome in outcomes if outcome in ("created", "superseded", "unchanged")),
            quarantined=len(quarantine),
        )
    except Exception as e:  # noqa: BLE001 - record_turn never raises into the host
        return TurnReceipt(ok=False, session_id=session, error=loop.failed("record_turn", e))


def remember_said(loop: MemoryLoop, session: str, user_text: str | None, written: Written) -> None:
    """Keep the ends of the session's last two user messages (and what they wrote) for :func:`.split_flag`.

    A flagged message (``None``) starts afresh: what follows it is not read with it.
    """
    key = (loop.jobs_prefix, session)
    kept = loop.said.pop(key, ())
    loop.said[key] = () if user_text is None else (*kept[-1:], (user_text[-SPLIT_CHARS:], written))
    while len(loop.said) > _SPLIT_SESSIONS:
        loop.said.pop(next(iter(loop.said)))


def host_metadata(loop: MemoryLoop, metadata: Any) -> dict[str, Any]:
    """The host's chunk metadata, made storable: values JSON cannot hold become text.

    Metadata that is not a mapping is dropped (reported in :meth:`.MemoryLoop.health`): the
    turn itself is always stored.
    """
    if metadata is None:
        return {}
    try:
        if not isinstance(metadata, Mapping):
            msg = f"metadata must be a dict, got {type(metadata).__name__}; it was not stored"
            raise UsageError(msg)
        plain = json.loads(json.dumps(dict(metadata), default=str, ensure_ascii=False))
        return dict(v.check_metadata(plain))
    except Exception as e:  # noqa: BLE001 - bad metadata never costs the turn
        loop.failed("record_turn metadata", e)
        return {}


def after_turn(loop: MemoryLoop, session: str) -> None:
    """Queue the work a stored turn leaves: extraction, embedding, ending earlier sessions."""
    if loop.llm_extraction_due():
        loop.submit("extract", "extract", lambda: jobs.extract_pending(loop))
    loop.queue_embedding()
    if session != loop.current_session:
        loop.current_session = session
        loop.submit("session_summary", "end-others", lambda: jobs.end_other_sessions(loop), critical=True)
    loop.since_sweep += 1
    if loop.since_sweep >= CONSOLIDATE_EVERY:
        loop.since_sweep = 0
        loop.submit("consolidate", "consolidate", lambda: jobs.consolidate(loop))
