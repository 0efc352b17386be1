r"""A folder of Markdown notes (an Obsidian vault, say) as a read-only memory source.

One ``.md``/``.markdown`` file is one note. Its id is a uuid5 of its root-relative POSIX
path under :data:`NAMESPACE`, so re-reads and ingests (``elastic-memory ingest``) upsert
instead of duplicating. Each :meth:`MarkdownFolder.notes` or ``search`` restats the tree and
re-parses only the files whose (mtime, size) changed; :meth:`MarkdownFolder.iter_notes`
streams the notes without keeping any (what an ingest reads).

>>> import pathlib, tempfile
>>> with tempfile.TemporaryDirectory() as vault:
...     _ = (pathlib.Path(vault) / "dog.md").write_text("---\ntags: [pets]\n---\n# Biscuit\nMy #beagle.\n")
...     folder = MarkdownFolder(vault)
...     note = folder.notes()[0]
...     hit = folder.search("beagle")[0]
>>> note.title, note.tags, note.content
('Biscuit', ('pets', 'beagle'), '# Biscuit\nMy #beagle.\n')
>>> hit.id == note.id == note_id("dog.md"), hit.metadata["source_path"]
(True, 'dog.md')

:class:`FolderStore` (``folder.as_store()``) serves a folder through the async store protocol,
so a federation can hold a folder of notes as one of its tiers. Scans run in a worker thread
(they read files); ranking, parsing and the change cache are the folder's.

>>> import asyncio
>>> async def as_tier(vault: str) -> list[str]:
...     store = MarkdownFolder(vault, scope="shared", pool="team").as_store()
...     hits = await store.search("beagle", mode="keyword", filters={"scope": "shared"})
...     await store.aclose()
...     return [store.name[:7], *(h.metadata["source_path"] for h in hits)]
>>> with tempfile.TemporaryDirectory() as vault:
...     _ = (pathlib.Path(vault) / "dog.md").write_text("My dog is a beagle.")
...     asyncio.run(as_tier(vault))
['folder:', 'dog.md']
"""

from __future__ import annotations

import asyncio
import errno
import fnmatch
import os
import stat
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .._validate import check_ids, check_k, check_mode, check_scope, clean_query, content_hash
from ..errors import ReadOnlyError, RecallWarning, UsageError
from ..federation.protocol import Entry, MemoryStore, TierHealth
from ..filters import Filters
from ..retrieval.scores import keyword_relevance
from ..types import Hit, MemoryId, MemoryRecord, RecallMode, Scope, Source
from . import _rank
from ._note import NAMESPACE, Note, Parsed, ScanReport, note_id, parse_note
from ._walk import FileRef, Tally, read_note, walk

__all__ = ["NAMESPACE", "FolderStore", "MarkdownFolder", "Note", "ReadOnlyError", "ScanReport", "note_id"]


class MarkdownFolder:
    """A read-only memory source over the Markdown notes under ``root``.

    Dot-files and dot-directories (``.obsidian/``, ``.trash/``), symlinks (never followed),
    files over ``max_file_bytes``, binary or non-UTF-8 files and paths matching an ``ignore``
    glob (``fnmatch`` on the root-relative POSIX path; ``*`` also matches ``/``) are skipped and
    counted in :attr:`scan_report`. Hits carry ``agent_id``, ``scope`` and ``pool``.

    Raises:
        UsageError: ``root`` is not a directory or an argument is wrong.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        agent_id: str = "default",
        scope: str = "private",
        pool: str | None = None,
        max_file_bytes: int = 1 << 20,
        ignore: Sequence[str] = (),
        extensions: Sequence[str] = (".md", ".markdown"),
    ) -> None:
        if not isinstance(root, str | os.PathLike):
            msg = f"root must be the path of a folder (a str or pathlib.Path), got {type(root).__name__}"
            raise UsageError(msg)
        if not Path(root).is_dir():
            state = "is a file, not a folder" if Path(root).exists() else "does not exist"
            msg = f"{root} {state}; pass the folder that holds the notes (an Obsidian vault, say)"
            raise UsageError(msg)
        if not isinstance(agent_id, str) or not agent_id.strip() or len(agent_id) > 256:
            msg = f"agent_id must be a non-empty string of at most 256 characters, got {agent_id!r}"
            raise UsageError(msg)
        if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int) or max_file_bytes < 1:
            msg = f"max_file_bytes must be a positive number of bytes, got {max_file_bytes!r}"
            raise UsageError(msg)
        for name, value in (("ignore", ignore), ("extensions", extensions)):
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                msg = f"{name} must be a list of non-empty strings such as ['drafts/*'], got {value!r}"
                raise UsageError(msg)
        if not all(e.startswith(".") for e in extensions):
            msg = f"extensions must start with a dot, such as ['.md'], got {list(extensions)!r}"
            raise UsageError(msg)
        scope_value, self._pool = check_scope(scope, pool)
        self._scope = Scope(scope_value)
        self._root = Path(root)
        self._agent_id = agent_id
        self._max = max_file_bytes
        self._ignore = tuple(ignore)
        self._extensions = tuple(e.lower() for e in extensions)
        self._cache: dict[str, Parsed] = {}
        self._report = ScanReport()
        self._lock = threading.Lock()
        self._warned = False

    def __repr__(self) -> str:
        return f"MarkdownFolder({str(self._root)!r}, agent_id={self._agent_id!r})"

    @property
    def root(self) -> Path:
        """The folder."""
        return self._root

    @property
    def agent_id(self) -> str:
        """The agent the folder's hits belong to."""
        return self._agent_id

    @property
    def scope(self) -> Scope:
        """The scope the folder's hits carry."""
        return self._scope

    @property
    def key(self) -> str:
        """The folder's absolute path, symlinks resolved: what ingested notes record as ``source_folder``."""
        return str(self._root.resolve())

    @property
    def pool(self) -> str | None:
        """The pool the folder's hits carry (``None`` unless the scope is shared)."""
        return self._pool

    @property
    def extensions(self) -> tuple[str, ...]:
        """The file extensions read as notes (lowercase)."""
        return self._extensions

    @property
    def scan_report(self) -> ScanReport:
        """The tally of the last scan (made by :meth:`notes`, :meth:`get` or :meth:`search`)."""
        return self._report

    # ----------------------------------------------------------------------- reads
    def notes(self) -> list[Note]:
        """Every note, by path; ``[]`` when the root is gone (see :meth:`health_check`)."""
        return [e.note for e in self._scan() if e.note is not None]

    def iter_notes(self) -> Iterator[tuple[FileRef, Note | None]]:
        """Every note file by path with its note, read one at a time and kept nowhere.

        The note is ``None`` for a file that was skipped (too large, binary, unreadable or
        now a symlink). :attr:`scan_report` holds the tally once the iteration ends.

        Raises:
            OSError: The root cannot be opened (nothing below it raises).
        """
        tally = Tally()
        for ref in walk(str(self._root), self._extensions, self._ignore, tally):
            entry = self._read(ref, tally, counters=False)
            yield ref, None if entry is None else entry.note
        self._report = ScanReport(**asdict(tally))

    def file_count(self) -> int:
        """How many note files :meth:`iter_notes` would yield (a walk that reads no file)."""
        return sum(1 for _ in walk(str(self._root), self._extensions, self._ignore, Tally()))

    def read(self, rel_path: str) -> Note | None:
        """The note at root-relative POSIX ``rel_path``, read as :meth:`iter_notes` would read it.

        ``None`` when no walk would yield a note there: a dot-path, another extension, an
        ignored path, a symlink on the way, a file gone, too large, binary or unreadable.
        Reads one file and never raises (the :attr:`scan_report` is left as it is).
        """
        if not isinstance(rel_path, str):
            return None
        parts = rel_path.split("/")
        if any(not p or p.startswith(".") for p in parts) or not parts[-1].lower().endswith(self._extensions):
            return None
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts) - 1)]
        if any(
            fnmatch.fnmatchcase(c, g) for g in self._ignore for c in (rel_path, *prefixes, *(d + "/" for d in prefixes))
        ):
            return None
        parent = str(self._root)
        try:
            for part in parts[:-1]:  # never through a symlink, as the walk
                parent = os.path.join(parent, part)
                if not stat.S_ISDIR(os.lstat(parent).st_mode):
                    return None
            info = os.lstat(os.path.join(parent, parts[-1]))
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        entry = self._read(
            FileRef(rel_path, parts[-1], parent, info.st_mtime_ns, info.st_size), Tally(), counters=False
        )
        return None if entry is None else entry.note

    def get(self, note_id: str) -> Note | None:
        """The note with id ``note_id``, or ``None``."""
        return next((n for n in self.notes() if n.id == note_id), None)

    def search(
        self, query: str, *, k: int = 10, mode: str = "keyword", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """The ``k`` notes that best match ``query``: pinned, relevance, importance, newest, path.

        Relevance is the token scan of :mod:`elastic_memory.connectors._rank`; only notes with
        relevance above 0 match. A query without words lists notes (pinned, importance,
        newest). Every ``mode`` is served by the scan: a folder has no vector index, and the
        first non-keyword ``mode`` warns once (:class:`~elastic_memory.RecallWarning`).
        ``filters``: tags (any of), tags_all, type, pinned, min_importance.
        """
        if not isinstance(query, str):
            msg = f"query must be a str, got {type(query).__name__}"
            raise UsageError(msg)
        check_k(k)
        wanted = _rank.NoteFilter.parse(filters)
        self.warn_if_not_keyword(mode, stacklevel=2)
        entries = [e for e in self._scan() if e.note is not None]
        words = list(dict.fromkeys(_rank.tokens(clean_query(query))))
        weights = _rank.idf(words, ((e.body or Counter(), e.title or Counter()) for e in entries))
        scored: list[tuple[float, Note]] = []
        for e in entries:
            n = e.note
            if n is None or not wanted.accepts(n.tags, n.type, n.pinned, n.importance):
                continue
            score = _rank.relevance(weights, e.body or Counter(), e.title or Counter())
            if score > 0 or not words:
                scored.append((score, n))
        scored.sort(key=lambda s: (not s[1].pinned, -s[0], -s[1].importance, -s[1].mtime_ns, s[1].rel_path))
        return [self._hit(n, score, bool(words)) for score, n in scored[:k]]

    def as_store(self, name: str | None = None) -> FolderStore:
        """This folder as an async :class:`~elastic_memory.federation.protocol.MemoryStore` (read-only).

        ``name`` defaults to ``"folder:<root name>"``; see :class:`~elastic_memory.connectors.FolderStore`.
        """
        return FolderStore(self, name=name)

    def write(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refuse: a Markdown folder is a source of truth, not a sink.

        Raises:
            ReadOnlyError: Always.
        """
        msg = (
            "a Markdown folder is read-only: edit the notes in the folder, or ingest it into a store with "
            "`elastic-memory ingest FOLDER --db PATH` and write there"
        )
        raise ReadOnlyError(msg)

    def health_check(self) -> dict[str, Any]:
        """``{"ok", "root", "reason"}`` from one stat and an access probe of the root; never raises."""
        root = str(self._root)
        try:
            info = os.stat(root)
        except (OSError, ValueError) as e:
            return {"ok": False, "root": root, "reason": f"the folder cannot be reached: {e}"}
        if not stat.S_ISDIR(info.st_mode):
            return {"ok": False, "root": root, "reason": "the path is no longer a directory"}
        if not os.access(root, os.R_OK | os.X_OK):
            return {"ok": False, "root": root, "reason": "the folder is not readable by this process"}
        return {"ok": True, "root": root, "reason": None}

    def warn_if_not_keyword(self, mode: Any, *, stacklevel: int) -> None:
        """Validate ``mode``; the first non-keyword one warns that it runs as keyword.

        ``stacklevel`` counts from the caller of this method (as :func:`warnings.warn` does),
        so :class:`~elastic_memory.connectors.FolderStore` can point the warning at its caller.
        """
        checked = check_mode(mode)
        if checked is not RecallMode.KEYWORD and not self._warned:
            self._warned = True
            msg = (
                f"the Markdown folder {str(self._root)!r} serves keyword search only; "
                f"{checked.value} search ran as keyword. "
                "Ingest it into a store with `elastic-memory ingest` for semantic recall"
            )
            warnings.warn(msg, RecallWarning, stacklevel=stacklevel + 1)

    # ---------------------------------------------------------------------- scanning
    def _scan(self) -> list[Parsed]:
        """Restat the tree, re-parse what changed, and return the entries by path."""
        with self._lock:
            tally = Tally()
            fresh: dict[str, Parsed] = {}
            try:
                for ref in walk(str(self._root), self._extensions, self._ignore, tally):
                    entry = self._load(ref, tally)
                    if entry is not None:
                        fresh[ref.rel_path] = entry
            except OSError:  # the root itself vanished or became unreadable
                tally, fresh = Tally(errors=1), {}
            self._cache = fresh
            self._report = ScanReport(**asdict(tally))
            return [fresh[p] for p in sorted(fresh)]

    def _load(self, ref: FileRef, tally: Tally) -> Parsed | None:
        entry = self._cache.get(ref.rel_path)
        if entry is None or (entry.mtime_ns, entry.size) != (ref.mtime_ns, ref.size):
            return self._read(ref, tally, counters=True)
        return self._tallied(entry, tally)

    def _read(self, ref: FileRef, tally: Tally, *, counters: bool) -> Parsed | None:
        """Read and parse one file, counting what happened (``None``: too large or unreadable)."""
        if ref.size > self._max:
            tally.skipped_large += 1
            return None
        try:
            data, mtime_ns, size = read_note(ref, self._max)
        except OSError as e:
            if e.errno == errno.ELOOP:
                tally.skipped_symlink += 1
            else:
                tally.errors += 1
            return None
        if len(data) > self._max:
            tally.skipped_large += 1
            return None
        return self._tallied(parse_note(ref.rel_path, data, mtime_ns, size, counters=counters), tally)

    @staticmethod
    def _tallied(entry: Parsed, tally: Tally) -> Parsed:
        if entry.note is None:
            tally.skipped_binary += 1
        else:
            tally.parsed += 1
            tally.bad_frontmatter += entry.bad
        return entry

    def _hit(self, note: Note, score: float, ranked: bool) -> Hit:
        return Hit(
            id=note.id,
            content=note.content,
            score=score if ranked else note.importance,
            type=note.type,
            metadata={**note.metadata, "source_path": note.rel_path},
            tags=note.tags,
            agent_id=self._agent_id,
            scope=self._scope,
            pool=self._pool,
            session_id=None,
            importance=note.importance,
            confidence=1.0,
            pinned=note.pinned,
            source=Source.IMPORTED,
            created_at=note.mtime_ns / 1e9,
            keyword_score=score if ranked else None,
            kind="note",
            relevance=keyword_relevance(score) if ranked else None,
        )


# ------------------------------------------------------------- as a store tier
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
