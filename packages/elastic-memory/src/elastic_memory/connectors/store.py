"""A Markdown folder as an async, read-only :class:`~elastic_memory.federation.protocol.MemoryStore`.

:class:`FolderStore` adapts one :class:`~elastic_memory.connectors.MarkdownFolder` to the store
protocol, so a federation can hold a folder of notes as one of its tiers. Scans run in a
worker thread (they read files); ranking, parsing and the change cache are the folder's.

>>> import asyncio, pathlib, tempfile
>>> async def demo(vault: str) -> list[str]:
...     store = MarkdownFolder(vault, scope="shared", pool="team").as_store()
...     hits = await store.search("beagle", mode="keyword", filters={"scope": "shared"})
...     await store.aclose()
...     return [store.name[:7], *(h.metadata["source_path"] for h in hits)]
>>> with tempfile.TemporaryDirectory() as vault:
...     _ = (pathlib.Path(vault) / "dog.md").write_text("My dog is a beagle.")
...     asyncio.run(demo(vault))
['folder:', 'dog.md']
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from .._validate import check_ids, check_k, content_hash
from ..errors import UsageError
from ..federation.protocol import Entry, MemoryStore, TierHealth
from ..filters import Filters
from ..types import Hit, MemoryId, MemoryRecord, Source
from .markdown import MarkdownFolder, Note, ReadOnlyError

__all__ = ["FolderStore"]

#: How many hits a search with ``since``/``until`` asks the folder for before keeping the recent ones.
_WINDOW_FETCH = 1000


class FolderStore:
    """One :class:`MarkdownFolder` behind the async store protocol; read-only.

    **Filters** are validated like :meth:`Memory.recall`'s (:meth:`Filters.parse`: unknown
    keys and bad values raise :class:`UsageError`), then, since a federation sends every tier
    the same filters and a tier must never return a hit that breaks one:

    - ``agent_id``, ``scope``, ``pool``, ``source``, ``kind`` and ``session_id`` are checked
      against what every note of the folder carries (its agent, scope and pool; source
      ``imported``, kind ``note``, no session): one that excludes them gives ``[]`` without a scan.
      A private or global folder has no pool, so any ``pool`` filter excludes it.
    - ``tags``, ``tags_all``, ``type``, ``pinned`` and ``min_importance`` go to the folder's
      own filter. ``exclude_session_id`` and ``min_confidence`` never exclude a note (no
      session, confidence 1.0).
    - ``since``/``until`` compare the note's modification time (its ``created_at``), among
      the folder's best 1000 hits for the query: exact unless more notes than that match.
    - ``metadata`` conditions are not evaluated by a folder, so they give ``[]``: ingest the
      folder (``elastic-memory ingest``) to filter notes on their frontmatter.

    **Modes**: the folder serves every mode by keyword; the first non-keyword search of the
    folder warns once (:class:`~elastic_memory.RecallWarning`, pointed at the caller).

    **Closing**: :meth:`aclose` is idempotent and leaves the folder usable; afterwards
    ``search`` and ``get`` raise :class:`UsageError`, and :meth:`health_check` reports not ok.

    Raises:
        UsageError: ``folder`` is not a :class:`MarkdownFolder` or ``name`` is not a non-empty string.
    """

    #: A federation never sends it writes or deletes.
    read_only = True

    def __init__(self, folder: MarkdownFolder, *, name: str | None = None) -> None:
        if not isinstance(folder, MarkdownFolder):
            msg = f"folder must be a MarkdownFolder, got {type(folder).__name__}; build one with MarkdownFolder(path)"
            raise UsageError(msg)
        if name is None:
            name = f"folder:{folder.root.name or folder.root}"
        if not isinstance(name, str) or not name.strip() or len(name) > 256:
            msg = f"name must be a non-empty string of at most 256 characters such as 'notes', got {name!r}"
            raise UsageError(msg)
        self.name: str = name
        self._folder = folder
        self._closed = False

    def __repr__(self) -> str:
        return f"FolderStore({self._folder!r}, name={self.name!r})"

    @property
    def folder(self) -> MarkdownFolder:
        """The folder served."""
        return self._folder

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._closed

    # ----------------------------------------------------------------------- reads
    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """The ``k`` best notes for ``query`` (see the class docstring for filters and modes).

        Raises:
            UsageError: An argument or filter is wrong, or the store is closed.
        """
        self._check_open()
        if not isinstance(query, str):
            msg = f"query must be a str, got {type(query).__name__}"
            raise UsageError(msg)
        check_k(k)
        plan = self._plan(filters)
        self._folder.warn_if_not_keyword(mode, stacklevel=2)
        if plan is None:
            return []
        own, window = plan
        fetch = k if window is None else _WINDOW_FETCH
        hits = await asyncio.to_thread(self._folder.search, query, k=fetch, mode="keyword", filters=own)
        if window is not None:
            hits = [h for h in hits if window(h.created_at)][:k]
        return hits

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The notes among ``ids``, in the order given (missing ids skipped, repeats once); one scan.

        Raises:
            UsageError: An id is not a valid memory id, or the store is closed.
        """
        self._check_open()
        wanted = list(dict.fromkeys(check_ids(ids)))
        if not wanted:
            return []
        notes = {n.id: n for n in await asyncio.to_thread(self._folder.notes)}
        return [self._record(notes[i]) for i in wanted if i in notes]

    async def health_check(self) -> TierHealth:
        """Whether the folder can be read now (one stat and access probe); never raises.

        ``detail`` holds ``root`` and ``last_scan``, the counts of the folder's last scan.
        """
        detail = {"root": str(self._folder.root), "last_scan": asdict(self._folder.scan_report)}
        if self._closed:
            return TierHealth(self.name, False, "this store is closed; make a new one with folder.as_store()", detail)
        probe = await asyncio.to_thread(self._folder.health_check)
        return TierHealth(self.name, bool(probe["ok"]), probe["reason"], detail)

    # ---------------------------------------------------------------------- writes
    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        """Refuse: edit the notes in the folder, or ingest it into a store and write there.

        Raises:
            ReadOnlyError: Always.
        """
        self._folder.write(entries)

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        """Refuse: delete or move the note files themselves; the next search no longer sees them.

        Raises:
            ReadOnlyError: Always.
        """
        msg = (
            f"a Markdown folder is read-only: delete or move the note files under {str(self._folder.root)!r} "
            "themselves (the next search no longer sees them), or forget the notes in the store you ingested them into"
        )
        raise ReadOnlyError(msg)

    async def aclose(self) -> None:
        """Mark the store closed (idempotent); the folder holds no open resources and stays usable."""
        self._closed = True

    # --------------------------------------------------------------------- helpers
    def _check_open(self) -> None:
        if self._closed:
            msg = f"the store {self.name!r} is closed; make a new one with folder.as_store()"
            raise UsageError(msg)

    def _plan(self, filters: Mapping[str, Any] | None) -> tuple[dict[str, Any], Callable[[float], bool] | None] | None:
        """The folder's own filters and a ``created_at`` test for ``filters``; ``None`` when no note can match."""
        f = Filters.parse(filters)
        folder = self._folder
        fixed = (
            (f.agent_ids, folder.agent_id),
            (f.scopes, folder.scope.value),
            (f.pools, folder.pool),
            (f.sources, Source.IMPORTED.value),
            (f.kinds, "note"),
            (f.session_ids, None),
        )
        if f.metadata or any(wanted and have not in wanted for wanted, have in fixed):
            return None
        own: dict[str, Any] = {}
        if f.tags_any:
            own["tags"] = list(f.tags_any)
        if f.tags_all:
            own["tags_all"] = list(f.tags_all)
        if f.types:
            own["type"] = list(f.types)
        if f.pinned is not None:
            own["pinned"] = f.pinned
        if f.min_importance is not None:
            own["min_importance"] = f.min_importance
        if f.since is None and f.until is None:
            return own, None
        low = float("-inf") if f.since is None else f.since
        high = float("inf") if f.until is None else f.until
        return own, lambda t: low <= t <= high

    def _record(self, note: Note) -> MemoryRecord:
        folder = self._folder
        at = note.mtime_ns / 1e9
        return MemoryRecord(
            id=note.id,
            content=note.content,
            agent_id=folder.agent_id,
            scope=folder.scope,
            pool=folder.pool,
            type=note.type,
            content_hash=content_hash(note.content),
            importance=note.importance,
            confidence=1.0,
            source=Source.IMPORTED,
            pinned=note.pinned,
            tags=note.tags,
            metadata={**note.metadata, "source_path": note.rel_path},
            session_id=None,
            created_at=at,
            updated_at=at,
            accessed_at=at,
            access_count=0,
            retention_strength=1.0,
            archived=False,
            deleted_at=None,
            expires_at=None,
            has_vector=False,
            kind="note",
        )


if TYPE_CHECKING:

    def _conforms(store: FolderStore) -> MemoryStore:
        return store  # mypy checks FolderStore against the protocol here
