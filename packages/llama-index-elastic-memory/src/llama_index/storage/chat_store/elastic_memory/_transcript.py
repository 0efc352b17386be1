"""The chat messages of one agent id in an elastic-memory store, as plans either facade runs.

The format (the ``base`` module says it in full): one message is one core memory of kind
``message`` under a dedicated agent id; ``session_id`` is the chat key, ``metadata`` holds
``seq`` (the position) and ``message`` (the ``ChatMessage`` as JSON), the tags say the key
and the status. A plan is a generator that yields the core calls it needs (:class:`Call`)
and is sent their results: :func:`drive` runs it on the sync facade, :func:`adrive` on the
async one, so each operation is written once.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store.base_db import MessageStatus

from elastic_memory import AsyncMemory, Hit, Memory, UsageError

T = TypeVar("T")

#: Messages read per recall (the core's largest ``k``).
_PAGE = 1_000
#: Sequence numbers per paged read: one less than a page, so only duplicate numbers fill a page.
_WINDOW = _PAGE - 1
#: Newest messages looked at first to find the highest sequence number.
_RECENT = 50
#: Characters of a message's text kept as the memory's searchable content.
_INDEX_CHARS = 10_000
#: Tag prefixes: the chat key, and the message status.
KEY_TAG = "chat-key:"
STATUS_TAG = "chat-status:"
#: Longest key: a tag holds at most 256 characters.
MAX_KEY_CHARS = 256 - len(KEY_TAG)
#: The agent id suffix used when none is given.
AGENT_SUFFIX = ":llama_index_chat"
_STATUSES = (MessageStatus.ACTIVE.value, MessageStatus.ARCHIVED.value)
#: The kind a message is stored as (never embedded, left out of recall unless asked for).
KIND = "message"
#: The kinds a message is read from: ``note`` is what the stores wrote before ``message`` existed.
_READ_KINDS = [KIND, "note"]
IN_MEMORY = ":memory:"
#: The statuses a listing of active messages covers (what LlamaIndex's ``Memory`` reads).
ACTIVE = (MessageStatus.ACTIVE.value,)
#: Keys whose last read a transcript keeps (the least recently used dropped).
_KEPT_KEYS = 256


# --------------------------------------------------------------------------- plans
@dataclass(frozen=True)
class Call:
    """One call of a method that :class:`Memory` and :class:`AsyncMemory` both have."""

    name: Literal["recall", "remember_many", "forget", "update", "tags", "generation"]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


#: The logic of an operation, written once: it yields the core calls it needs and is sent their results.
Plan = Generator[Call, Any, T]


def drive(plan: Plan[T], memory: Memory) -> T:
    """Run ``plan`` on the sync facade."""
    try:
        call = next(plan)
        while True:
            call = plan.send(getattr(memory, call.name)(*call.args, **call.kwargs))
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        plan.close()


async def adrive(plan: Plan[T], memory: AsyncMemory) -> T:
    """Run ``plan`` on the async facade (never the sync one)."""
    try:
        call = next(plan)
        while True:
            call = plan.send(await getattr(memory, call.name)(*call.args, **call.kwargs))
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        plan.close()


# ---------------------------------------------------------------------- validation
def check_key(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
        shown = repr(key) if not isinstance(key, str) or len(key) <= 80 else f"a string of {len(key)} characters"
        msg = f"a chat key must be a non-empty string of at most {MAX_KEY_CHARS} characters, got {shown}"
        raise UsageError(msg)
    return key


def check_status(status: Any, *, optional: bool) -> tuple[str, ...]:
    """The status values a call covers (``None``, where allowed: both)."""
    if status is None and optional:
        return _STATUSES
    try:
        return (MessageStatus(status).value,)
    except ValueError:
        allowed = "MessageStatus.ACTIVE, MessageStatus.ARCHIVED" + (" or None" if optional else "")
        msg = f"status must be {allowed}, got {status!r}"
        raise UsageError(msg) from None


def check_count(name: str, value: Any, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"{name} must be a non-negative integer{' or None' if optional else ''}, got {value!r}"
        raise UsageError(msg)
    return value


def check_index(idx: Any) -> int:
    if isinstance(idx, bool) or not isinstance(idx, int):
        msg = f"idx must be an integer position (negative counts from the end), got {idx!r}"
        raise UsageError(msg)
    return idx


def check_messages(messages: Any) -> list[ChatMessage]:
    if isinstance(messages, ChatMessage | str | bytes | Mapping) or not isinstance(messages, Sequence):
        msg = f"messages must be a list of ChatMessage, got {type(messages).__name__}"
        raise UsageError(msg)
    batch = list(messages)
    for n, message in enumerate(batch):
        if not isinstance(message, ChatMessage):
            msg = f"messages[{n}] is a {type(message).__name__}, not a llama_index ChatMessage"
            raise UsageError(msg)
    return batch


def check_message(message: Any) -> ChatMessage:
    if not isinstance(message, ChatMessage):
        msg = f"message must be a llama_index ChatMessage, got {type(message).__name__}"
        raise UsageError(msg)
    return message


#: A message ready to store: its status, searchable text and exact JSON form.
_Encoded = tuple[str, str, dict[str, Any]]


def _encoded(message: ChatMessage, n: int, status: str) -> _Encoded:
    """``message`` ready to store (refused when a field is not JSON-serialisable)."""
    try:
        data = message.model_dump(mode="json")
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as e:  # PydanticSerializationError is a ValueError
        msg = (
            f"messages[{n}] ({message.role.value}) cannot be stored: a field (additional_kwargs?) "
            f"is not JSON-serialisable: {e}"
        )
        raise UsageError(msg) from e
    text = (message.content or "").strip()[:_INDEX_CHARS]
    text = text.encode("utf-8", "replace").decode("utf-8")
    return status, text or f"({message.role.value} message)", data


def _encode(messages: list[ChatMessage], status: str) -> list[_Encoded]:
    return [_encoded(m, n, status) for n, m in enumerate(messages)]


# ---------------------------------------------------------------------------- rows
@dataclass(frozen=True)
class Row:
    """One stored message."""

    id: str
    seq: int
    created_at: float
    status: str
    data: dict[str, Any]
    content: str

    def message(self) -> ChatMessage:
        """A new message each call: a transcript keeps its rows, and a caller may change what it got."""
        return ChatMessage.model_validate(copy.deepcopy(self.data))

    def record(self, key: str) -> dict[str, Any]:
        return {"key": key, "status": self.status, "message": copy.deepcopy(self.data)}


def _row(hit: Hit) -> Row | None:
    """The message ``hit`` holds, or ``None`` for a memory that is not one (skipped)."""
    seq = hit.metadata.get("seq")
    data = hit.metadata.get("message")
    status = next((t[len(STATUS_TAG) :] for t in hit.tags if t.startswith(STATUS_TAG)), None)
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0 or not isinstance(data, dict):
        return None
    if status not in _STATUSES:
        return None
    return Row(hit.id, seq, hit.created_at, status, data, hit.content)


def _ordered(hits: Iterable[Hit]) -> list[Row]:
    """Messages in position order; equal positions (two writers at once) by time, then as written."""
    rows = [r for hit in reversed(list(hits)) if (r := _row(hit)) is not None]  # recall lists newest first
    rows.sort(key=lambda r: (r.seq, r.created_at))  # stable: full ties keep the order written
    return rows


def _as_stored(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as a read gives it back: the core keeps metadata as JSON with its keys sorted."""
    stored: dict[str, Any] = json.loads(json.dumps(data, sort_keys=True))
    return stored


def _highest(rows: Iterable[Row]) -> Row | None:
    best: Row | None = None
    for r in rows:
        if best is None or (r.seq, r.created_at) >= (best.seq, best.created_at):
            best = r
    return best


@dataclass(frozen=True)
class _Seen:
    """What a transcript last read of one key: current while the store's generation is ``generation``."""

    generation: int
    #: Listings read, by the statuses they cover: the key's messages with those statuses, in order.
    listed: Mapping[tuple[str, ...], tuple[Row, ...]] = field(default_factory=dict)
    #: The highest-positioned message of either status (``None``: the key holds none), once known.
    top: Row | None = None
    top_known: bool = False


class Transcript:
    """The chat messages of one agent id (and one of its users) in one store, as plans either facade can run.

    The plans run on the agent's own handle: a user's handle reads and writes its user's memory
    loop only, while the messages belong to the chat agent id's partition of that user.

    A transcript keeps what it last read of a key while the store's generation (its write
    counter, :meth:`elastic_memory.AsyncMemory.generation`) stays the same: any write, by this
    process or another, moves it on, and the next read reads again. Its own appends it adds to
    what it keeps when the generation shows no other write came between. ``listing``: the
    statuses it reads ahead on an append, those of the listing its store's reader asks for next.
    A store that keeps no generation (PostgreSQL) is read every time.
    """

    def __init__(self, agent_id: str, user_id: str | None = None, *, listing: tuple[str, ...] = _STATUSES) -> None:
        self.agent_id = agent_id
        #: Whose rows: the chat agent id, and the user when the store serves one.
        self.owner: dict[str, str] = (
            {"agent_id": agent_id} if user_id is None else {"agent_id": agent_id, "user_id": user_id}
        )
        self.listing = listing
        self._seen: OrderedDict[str, _Seen] = OrderedDict()
        self._lock = threading.Lock()  # the sync store's plans may run on several threads

    # ------------------------------------------------------------ what was read
    def _current(self, key: str) -> Plan[tuple[int | None, _Seen | None]]:
        """The store's generation now, and what was read of ``key`` if it is still current."""
        generation: int | None = yield Call("generation")
        with self._lock:
            seen = self._seen.get(key)
        if generation is None or seen is None or seen.generation != generation:
            return generation, None
        return generation, seen

    def _keep(self, key: str, seen: _Seen) -> None:
        with self._lock:
            self._seen[key] = seen
            self._seen.move_to_end(key)
            while len(self._seen) > _KEPT_KEYS:
                self._seen.popitem(last=False)

    def _kept(self, key: str) -> _Seen | None:
        with self._lock:
            return self._seen.get(key)

    def _at(self, key: str, generation: int) -> _Seen:
        """What is kept of ``key`` at ``generation`` (nothing yet, if what is kept is older)."""
        seen = self._kept(key)
        return seen if seen is not None and seen.generation == generation else _Seen(generation)

    def _filters(
        self, key: str | None, statuses: tuple[str, ...] = _STATUSES, seq: dict[str, int] | None = None
    ) -> dict[str, Any]:
        filters: dict[str, Any] = {**self.owner, "kind": _READ_KINDS, "tags": [STATUS_TAG + s for s in statuses]}
        if key is not None:
            filters["session_id"] = key
        if seq is not None:
            filters["metadata"] = {"seq": seq}
        return filters

    def _list(self, key: str, statuses: tuple[str, ...], k: int = _PAGE, seq: dict[str, int] | None = None) -> Call:
        filters = self._filters(key, statuses, seq)
        return Call("recall", ("",), {"k": k, "mode": "keyword", "filters": filters, "touch": False})

    # ----------------------------------------------------------------- reads
    def rows(self, key: str, statuses: tuple[str, ...] = _STATUSES) -> Plan[list[Row]]:
        """Every message of ``key`` with one of ``statuses``, in order (kept while the store is unchanged)."""
        generation, seen = yield from self._current(key)
        return list((yield from self._listing(key, statuses, generation, seen)))

    def _listing(
        self, key: str, statuses: tuple[str, ...], generation: int | None, seen: _Seen | None
    ) -> Plan[tuple[Row, ...]]:
        """:meth:`rows` once the generation is read (``seen``: what is current of ``key``)."""
        if seen is not None and statuses in seen.listed:
            return seen.listed[statuses]
        rows = tuple((yield from self._read(key, statuses)))
        if generation is not None:
            base = self._at(key, generation)
            self._keep(key, replace(base, listed={**base.listed, statuses: rows}))
        return rows

    def _read(self, key: str, statuses: tuple[str, ...]) -> Plan[list[Row]]:
        """Every message of ``key`` with one of ``statuses``, in order (paged beyond one recall)."""
        hits: list[Hit] = yield self._list(key, statuses)
        if len(hits) < _PAGE:
            return _ordered(hits)
        counts = yield from self.counts(key)
        total = sum(counts[s] for s in statuses)
        top = yield from self._newest(key, statuses, [r for h in hits if (r := _row(h)) is not None])
        found: list[Hit] = []
        high = top.seq + 1 if top is not None else 0
        while high > 0 and len(found) < total:  # down from the newest: active messages are found first
            low = max(0, high - _WINDOW)
            found += yield from self._window(key, statuses, low, high)
            high = low
        return _ordered(found)

    def _window(self, key: str, statuses: tuple[str, ...], low: int, high: int) -> Plan[list[Hit]]:
        """The messages with ``low <= seq < high``; a full page (duplicate numbers) is split in two."""
        hits: list[Hit] = yield self._list(key, statuses, seq={"$gte": low, "$lt": high})
        if len(hits) < _PAGE or high - low < 2:
            return hits
        middle = (low + high) // 2
        return (yield from self._window(key, statuses, low, middle)) + (
            yield from self._window(key, statuses, middle, high)
        )

    def newest(self, key: str) -> Plan[Row | None]:
        """The message with the highest position (of any status), or ``None`` (kept while the store is unchanged)."""
        generation, seen = yield from self._current(key)
        return (yield from self._top(key, generation, seen))

    def _top(self, key: str, generation: int | None, seen: _Seen | None) -> Plan[Row | None]:
        """:meth:`newest` once the generation is read (``seen``: what is current of ``key``)."""
        if seen is not None and seen.top_known:
            return seen.top
        if seen is not None and _STATUSES in seen.listed:
            top = _highest(seen.listed[_STATUSES])
        elif seen is not None and seen.listed.get(ACTIVE):  # only a message past the newest active one is newer
            top = yield from self._newest(key, _STATUSES, list(seen.listed[ACTIVE]))
        else:
            hits: list[Hit] = yield self._list(key, _STATUSES, k=_RECENT)
            top = yield from self._newest(key, _STATUSES, [r for h in hits if (r := _row(h)) is not None])
        if generation is not None:
            self._keep(key, replace(self._at(key, generation), top=top, top_known=True))
        return top

    def _newest(self, key: str, statuses: tuple[str, ...], seen: list[Row]) -> Plan[Row | None]:
        """The highest-positioned of ``seen`` unless a higher one exists (a clock that went back)."""
        best = _highest(seen)
        while best is not None:
            hits: list[Hit] = yield self._list(key, statuses, seq={"$gt": best.seq})
            higher = _highest(r for h in hits if (r := _row(h)) is not None)
            if higher is None:
                break
            best = higher
        return best

    def counts(self, key: str) -> Plan[dict[str, int]]:
        """Messages of ``key`` by status."""
        tags: dict[str, int] = yield Call(
            "tags", kwargs={"filters": {**self.owner, "session_id": key}, "prefix": STATUS_TAG}
        )
        return {s: tags.get(STATUS_TAG + s, 0) for s in _STATUSES}

    def keys(self) -> Plan[list[str]]:
        """Every key with at least one message, sorted."""
        tags: dict[str, int] = yield Call("tags", kwargs={"filters": self.owner, "prefix": KEY_TAG})
        return [t[len(KEY_TAG) :] for t, n in tags.items() if n > 0]

    def everything(self) -> Plan[list[dict[str, Any]]]:
        """Every message of every key, as ``{"key", "status", "message"}`` records (for serialisation)."""
        out: list[dict[str, Any]] = []
        for key in (yield from self.keys()):
            out += [r.record(key) for r in (yield from self.rows(key))]
        return out

    # ---------------------------------------------------------------- writes
    def _item(self, key: str, seq: int, encoded: _Encoded) -> dict[str, Any]:
        status, text, data = encoded
        return {
            "content": text,
            "kind": KIND,
            "type": "episodic",
            **self.owner,
            "session_id": key,
            "pinned": True,
            "tags": [KEY_TAG + key, STATUS_TAG + status],
            "metadata": {"seq": seq, "message": data},
        }

    def _items(self, key: str, batch: list[_Encoded], first: int) -> list[dict[str, Any]]:
        return [self._item(key, first + n, encoded) for n, encoded in enumerate(batch)]

    def append(self, key: str, messages: list[ChatMessage], status: str) -> Plan[None]:
        """Add ``messages`` after the newest one, in one transaction."""
        batch = _encode(messages, status)  # bad input is refused before any I/O
        if not batch:
            return
        generation, seen = yield from self._current(key)
        if status in self.listing:  # what is read next: with it, finding the newest costs less
            yield from self._listing(key, self.listing, generation, seen)
            seen = None if generation is None else self._at(key, generation)
        top = yield from self._top(key, generation, seen)
        before = None if generation is None else self._at(key, generation)
        first = top.seq + 1 if top else 0
        ids: list[str] = yield Call("remember_many", (self._items(key, batch, first),), {"dedupe": False})
        if before is None or not before.top_known or len(ids) != len(batch):
            return
        after: int | None = yield Call("generation")
        if after != before.generation + 1:
            return  # another write came between: the next read reads again
        stamp = top.created_at if top is not None else 0.0  # a time only orders equal positions: these are unique
        pairs = enumerate(zip(ids, batch, strict=True))
        made = tuple(Row(i, first + n, stamp, s, _as_stored(data), text) for n, (i, (s, text, data)) in pairs)
        listed = {
            statuses: rows + tuple(r for r in made if r.status in statuses) for statuses, rows in before.listed.items()
        }
        self._keep(key, _Seen(after, listed, made[-1], top_known=True))

    def insert(self, key: str, message: ChatMessage, idx: int, status: str) -> Plan[None]:
        """Put ``message`` at position ``idx`` as ``list.insert`` does, in one transaction.

        The message takes the position after the one before it; the messages after it that
        would not sort after it move up one (rewritten with their ids and times).
        """
        batch = _encode([message], status)
        rows = yield from self.rows(key)
        at = _insertion_point(len(rows), idx)
        seq = last = rows[at - 1].seq + 1 if at else 0
        moved: list[tuple[Row, int]] = []
        for row in rows[at:]:
            last = last + 1 if row.seq <= last else row.seq
            if last != row.seq:
                moved.append((row, last))
        items = [self._item(key, seq, batch[0])]
        items += [{**self._item(key, to, (r.status, r.content, r.data)), "id": r.id} for r, to in moved]
        yield Call("remember_many", (items,), {"dedupe": False})

    def replace(self, key: str, messages: list[ChatMessage], status: str) -> Plan[list[Row]]:
        """Write ``messages``, then erase what ``key`` held before (a failed write loses nothing)."""
        batch = _encode(messages, status)
        old = yield from self.rows(key)
        if batch:
            top = _highest(old)
            yield Call("remember_many", (self._items(key, batch, top.seq + 1 if top else 0),), {"dedupe": False})
        yield from self.erase(old)
        return old

    def restore(self, records: Any) -> Plan[None]:
        """Append serialised ``{"key", "status", "message"}`` records, in order, in one transaction."""
        if not isinstance(records, list):
            msg = f"db_data must be a list of {{'key', 'status', 'message'}} records, got {type(records).__name__}"
            raise UsageError(msg)
        by_key: dict[str, list[_Encoded]] = {}
        for n, record in enumerate(records):
            if not isinstance(record, Mapping) or not {"key", "status", "message"} <= set(record):
                msg = f"db_data[{n}] is not a {{'key', 'status', 'message'}} record: {record!r}"
                raise UsageError(msg)
            try:
                message = ChatMessage.model_validate(record["message"])
            except ValueError as e:
                msg = f"db_data[{n}]['message'] is not a ChatMessage: {e}"
                raise UsageError(msg) from e
            status = check_status(record["status"], optional=False)[0]
            by_key.setdefault(check_key(record["key"]), []).append(_encoded(message, n, status))
        items: list[dict[str, Any]] = []
        for key, batch in by_key.items():
            top = yield from self.newest(key)
            items += self._items(key, batch, top.seq + 1 if top else 0)
        if items:
            yield Call("remember_many", (items,), {"dedupe": False})

    def erase(self, rows: Sequence[Row]) -> Plan[None]:
        """Hard-delete ``rows`` in one transaction."""
        if rows:
            yield Call("forget", ([r.id for r in rows],), {"hard": True})

    def archive(self, key: str, rows: Sequence[Row]) -> Plan[None]:
        """Mark ``rows`` archived: their status tag changes, content and position stay."""
        for r in rows:
            yield Call("update", (r.id,), {"tags": [KEY_TAG + key, STATUS_TAG + MessageStatus.ARCHIVED.value]})


def pick(rows: list[Row], idx: int) -> Row | None:
    return rows[idx] if -len(rows) <= idx < len(rows) else None


def _insertion_point(size: int, idx: int) -> int:
    """Where ``list.insert(idx, ...)`` puts an item in a list of ``size`` (negative counts from the end, clamped)."""
    return max(0, size + idx) if idx < 0 else min(idx, size)
