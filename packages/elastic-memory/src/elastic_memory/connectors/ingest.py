"""Keep a store in step with a folder of Markdown notes.

Each note is stored under its folder id (:func:`elastic_memory.connectors.note_id`), with
``source_folder``, ``source_path``, ``source_mtime_ns`` and ``source_size`` in its metadata,
so a re-run is a sync:

- a new note is added and a note whose text changed is rewritten (and embedded again);
- a note whose text is unchanged is never embedded again: when only its file's time or its
  frontmatter changed, the stored record's fields are rewritten and its vector kept;
- a note renamed or moved with its text unchanged keeps its id (and vector, tags, links);
- a note that left the folder is archived (hidden from recall, reversible) and reported;
  ``delete_missing`` forgets it instead (soft, or ``hard``). A note that comes back is
  restored. Only the notes of this folder are swept, and only those whose file is gone: a
  note now skipped (ignored, too large, unreadable) stays as it is;
- a note forgotten or archived in the store (not by a sweep) comes back only when its file's
  text changes;
- a folder that moved (renamed, or mounted elsewhere) keeps its notes: the notes of another
  ``source_folder`` whose directory is gone are adopted when most of them are found here at
  the same paths with the same text (they keep their ids and vectors; the rest of them are
  swept like this folder's own, and that folder's wikilink edges are dropped). The notes of
  a folder whose directory still exists are never touched;
- an empty (or unmounted) folder sweeps nothing: when the walk finds no note file at all but
  the store holds live notes of the folder, the report says so (``sweep_skipped``) and
  ``allow_empty`` is needed to archive (or forget) them all.

Notes stored before ``source_folder`` existed are adopted when their path is seen again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .._validate import MAX_CONTENT_CHARS, build_row
from ..errors import UsageError
from ..types import MemoryRecord
from .markdown import NAMESPACE, MarkdownFolder, Note, note_id
from .wikilinks import LinkIndex, source_of

if TYPE_CHECKING:
    from ..facade.memory import Memory

__all__ = ["BATCH", "MISSING_AT", "IngestReport", "ingest_folder", "note_item"]

#: Notes looked up, embedded and written together: one ``remember_many`` transaction each, so
#: an interrupted ingest keeps every finished batch, and Ctrl-C waits for one batch at most.
BATCH = 16
#: Notes read ahead and sorted by length before they are cut into batches: the model pads a
#: batch to its longest text, so like lengths waste less (8% fewer padded tokens than 16
#: notes in file order, the embedder's own rate on 256 at a time).
LOOKAHEAD = 256
#: The metadata key a sweep stamps (the time) on the notes it archived or forgot.
MISSING_AT = "source_missing_at"
#: Records read per page when listing a folder's notes (whole records: their text too).
PAGE = 250
#: How many paths of missing notes a report names.
MISSING_SHOWN = 20
#: How many notes of a folder that is gone are read here to tell whether it moved here.
PROBES = 16
#: The most other folders (``source_folder`` values) looked at for one that moved.
MAX_FOLDERS = 1_000
#: Fields a touch of the file changes without changing the note.
_FILE_STAT = ("source_mtime_ns", "source_size")


@dataclasses.dataclass(frozen=True)
class IngestReport:
    """What an ingest did: ``new + updated + unchanged + renamed + restored`` notes were read, ``skipped`` not."""

    scanned: int
    new: int
    updated: int
    unchanged: int
    skipped: int
    bad_frontmatter: int
    links: int = 0
    """Wikilink edges written to the store's graph (``[[Note]]`` resolved within the folder)."""
    renamed: int = 0
    """Notes found under a new path with the same text: they kept their id and vector."""
    restored: int = 0
    """Notes back in the folder after an earlier ingest archived or forgot them."""
    archived: int = 0
    """Notes whose file is gone, archived by this run (hidden from recall, reversible)."""
    deleted: int = 0
    """Notes whose file is gone, forgotten by this run (``delete_missing``)."""
    missing_paths: tuple[str, ...] = ()
    """The first :data:`MISSING_SHOWN` paths (sorted) of the notes archived or forgotten."""
    moved_from: tuple[str, ...] = ()
    """The folders (``source_folder``) gone from disk whose notes this folder adopted: it moved."""
    adopted: int = 0
    """Notes of those folders found here (kept their ids and vectors, now of this folder)."""
    sweep_skipped: str | None = None
    """Why no note was archived or forgotten although files seem gone (an empty folder), or ``None``."""


def note_item(note: Note, folder: str | None = None) -> dict[str, Any]:
    """The ``remember_many`` item of a note (an empty note is remembered by its title).

    ``folder`` (:attr:`MarkdownFolder.key`) goes into the metadata as ``source_folder``.
    """
    where = {} if folder is None else {"source_folder": folder}
    return {
        "id": note.id,
        "content": note.content if note.content.strip() else note.title,
        "type": note.type.value,
        "importance": note.importance,
        "pinned": note.pinned,
        "tags": list(note.tags),
        "source": "imported",
        "metadata": {
            **note.metadata,
            **where,
            "source_path": note.rel_path,
            "source_mtime_ns": note.mtime_ns,
            "source_size": note.size,
        },
    }


def ingest_folder(
    mem: Memory,
    folder: MarkdownFolder,
    *,
    delete_missing: bool = False,
    hard: bool = False,
    allow_empty: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> IngestReport:
    """Bring ``mem`` in step with ``folder`` (see the module docstring), :data:`BATCH` notes at a time.

    ``delete_missing`` forgets the notes whose file is gone instead of archiving them;
    ``hard`` (with ``delete_missing``) deletes them for good. A folder with no note file at
    all sweeps nothing (an unmounted drive looks empty) unless ``allow_empty``.
    ``on_start(total)`` is called with the number of note files before any is read,
    ``on_batch(n)`` after each batch.

    Raises:
        UsageError: ``hard`` without ``delete_missing``, or a flag is not a bool.
        OSError: The folder cannot be read.
    """
    for name, value in (("delete_missing", delete_missing), ("hard", hard), ("allow_empty", allow_empty)):
        if not isinstance(value, bool):
            msg = f"{name} must be True or False, got {value!r}"
            raise UsageError(msg)
    if hard and not delete_missing:
        msg = "hard=True deletes the missing notes for good: pass it with delete_missing=True"
        raise UsageError(msg)
    sync = _Sync(mem, folder)
    sync.survey()
    if on_start is not None:
        on_start(folder.file_count())
    ahead: list[Note] = []
    skipped = files = 0

    def flush() -> None:
        nonlocal skipped
        ahead.sort(key=lambda n: len(n.content))
        for start in range(0, len(ahead), BATCH):
            window = ahead[start : start + BATCH]
            sync.write(window)
            if on_batch is not None:
                on_batch(len(window))
        if on_batch is not None and skipped:
            on_batch(skipped)
        ahead.clear()
        skipped = 0

    for ref, note in folder.iter_notes():
        files += 1
        if note is None:
            sync.keep(ref.rel_path)  # skipped (too large, binary, unreadable): its record stays
            skipped += 1
        else:
            ahead.append(note)
        if len(ahead) + skipped >= LOOKAHEAD:
            flush()
    flush()
    scan = folder.scan_report
    archived = deleted = written = 0
    missing: tuple[str, ...] = ()
    skip = None
    if files == 0 and sync.live and not allow_empty:
        skip = (
            f"the folder holds no note file now, but the store holds {sync.live} live notes of it; "
            "an empty or unmounted folder is not taken to mean that every note was deleted. "
            "If the folder really is empty now, ingest it again with --allow-empty (allow_empty=True)"
        )
    else:
        archived, deleted, missing = sync.sweep(delete_missing=delete_missing, hard=hard)
        sync.retire()
        edges, _ = sync.links.resolve(source_of(folder))
        written = mem.graph.replace_source(source_of(folder), edges)  # link hops join graph-aware recall
    skipped = (
        scan.skipped_large + scan.skipped_binary + scan.skipped_symlink + scan.skipped_ignored + scan.errors
    ) + sync.too_long
    return IngestReport(
        scanned=scan.scanned,
        new=sync.new,
        updated=sync.updated,
        unchanged=sync.unchanged,
        skipped=skipped,
        bad_frontmatter=scan.bad_frontmatter,
        links=written,
        renamed=sync.renamed,
        restored=sync.restored,
        archived=archived,
        deleted=deleted,
        missing_paths=missing,
        moved_from=tuple(sync.adopted),
        adopted=sum(1 for i in sync.adopted_ids if i in sync.seen),
        sweep_skipped=skip,
    )


def _folder_records(mem: Memory, folder: str) -> Iterator[MemoryRecord]:
    """Every record (hidden ones too) ingested from ``folder``, page by page."""
    after = None
    while True:
        page = mem.list({"metadata": {"source_folder": folder}}, state="all", limit=PAGE, after=after)
        yield from page.records
        if page.next is None:
            return
        after = page.next


def _other_folders(mem: Memory, key: str) -> Iterator[str]:
    """Every other ``source_folder`` in the store (one single-record query each)."""
    known: list[str] = [key]
    for _ in range(MAX_FOLDERS):
        where = {"source_folder": {"$exists": True, "$nin": known}}
        page = mem.list({"metadata": where}, state="all", limit=1)
        if not page.records:
            return
        folder = page.records[0].metadata.get("source_folder")
        if not isinstance(folder, str):
            return  # not written by an ingest: $nin could not step past it
        known.append(folder)
        yield folder


def _dir_gone(path: str) -> bool:
    """Whether no directory is at absolute ``path`` any more (one that cannot be checked is not gone)."""
    if not os.path.isabs(path):
        return False
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        return False
    return not stat.S_ISDIR(info.st_mode)


def _path_of(record: MemoryRecord) -> str | None:
    path = record.metadata.get("source_path")
    return path if isinstance(path, str) else None


def _hidden_by_hand(record: MemoryRecord) -> bool:
    """Forgotten or archived in the store, not by a sweep."""
    return (record.deleted_at is not None or record.archived) and MISSING_AT not in record.metadata


class _Sync:
    """One ingest's state: what the store holds of the folder, and what the walk saw."""

    def __init__(self, mem: Memory, folder: MarkdownFolder) -> None:
        self.mem = mem
        self.folder = folder
        self.key = folder.key
        #: Other folders whose directory is gone, and those of them that moved here.
        self.orphaned: set[str] = set()
        self.adopted: list[str] = []
        #: Ids of the adopted folders' records, and of those that lost their path to another record.
        self.adopted_ids: set[int | str] = set()
        self.superseded: set[int | str] = set()
        #: How many records of this folder are live (neither archived nor forgotten).
        self.live = 0
        self.links = LinkIndex(folder.extensions)
        #: Stored ids of the notes seen (and of skipped files), by :func:`_key`.
        self.seen: set[int | str] = set()
        #: Path -> id of the records stored under another path's id (renamed notes).
        self.alias: dict[str, str] = {}
        #: Content hash -> ids of the records whose file is gone: what a renamed note reclaims.
        self.gone: dict[str, list[str]] = {}
        self.new = self.updated = self.unchanged = self.renamed = self.restored = self.too_long = 0

    def survey(self) -> None:
        """Read what the store holds of the folder (and of folders that moved here).

        That is: renamed notes' paths, and notes whose file is gone. A path held by this
        folder's record stays its own; an adopted record at that path is superseded (swept).
        """
        self._find_moved()
        claimed: set[str] = set()
        for key in (self.key, *self.adopted):
            own = key == self.key
            for record in _folder_records(self.mem, key):
                if own:
                    self.live += record.deleted_at is None and not record.archived
                else:
                    self.adopted_ids.add(_key(record.id))
                path = _path_of(record)
                if path is None or _hidden_by_hand(record):
                    continue
                if not own and path in claimed:
                    self.superseded.add(_key(record.id))
                    continue
                if record.id != note_id(path):
                    self.alias[path] = record.id
                claimed.add(path)
                if self._gone(path):
                    self.gone.setdefault(record.content_hash, []).append(record.id)

    def _find_moved(self) -> None:
        """Adopt the other folders whose directory is gone and whose notes are here: they moved."""
        for key in _other_folders(self.mem, self.key):
            if _dir_gone(key):
                self.orphaned.add(key)
                if self._moved_here(key):
                    self.adopted.append(key)

    def _moved_here(self, key: str) -> bool:
        """Whether at least half of ``key``'s live notes are at the same paths here, mostly with the same text.

        Up to :data:`PROBES` of those files are read and compared.
        """
        live = [
            (path, r.content_hash)
            for r in _folder_records(self.mem, key)
            if (path := _path_of(r)) is not None and r.deleted_at is None and not r.archived
        ]
        present = [(path, content_hash) for path, content_hash in live if not self._gone(path)]
        if not present or len(present) * 2 < len(live):
            return False
        checked = matched = 0
        for path, content_hash in present:
            note = self.folder.read(path)
            if note is None:
                continue
            checked += 1
            matched += self._row(note_item(note, self.key))["content_hash"] == content_hash
            if checked == PROBES:
                break
        return matched * 2 > checked

    def _row(self, item: dict[str, Any]) -> dict[str, Any]:
        """The row the store would write for ``item`` (its ``content_hash`` in particular)."""
        return build_row(item["content"], now=0.0, default_agent=self.mem.agent_id, **_fields(item))

    def keep(self, rel_path: str) -> None:
        """Mark the record of a skipped file as seen, so no sweep takes it."""
        self.seen.add(_key(self.alias.get(rel_path) or note_id(rel_path)))

    def write(self, notes: list[Note]) -> None:
        """Look up one batch of notes and write what changed: text changes embedded, the rest not."""
        ids = [self.alias.get(n.rel_path, n.id) for n in notes]
        held = {r.id: r for r in self.mem.get_many(ids)} if ids else {}
        embed: list[dict[str, Any]] = []
        keep: list[dict[str, Any]] = []  # the text is stored already: rewrite the fields, keep the vector
        for note, mid in zip(notes, ids, strict=True):
            item = note_item(note, self.key)
            if len(item["content"]) > MAX_CONTENT_CHARS:
                self.too_long += 1
                self.seen.add(_key(mid))
                continue
            record = held.get(mid)
            if record is not None and self._taken(record, note.rel_path):
                record = None
                item["id"] = str(uuid.uuid5(NAMESPACE, f"{self.key}\n{note.rel_path}"))
            else:
                item["id"] = mid
            self._file(record, item, embed, keep)
            self.seen.add(_key(item["id"]))
            self.links.add(note.rel_path, item["id"], note.content)
        if embed or keep:
            vectors = self.mem.vectors([i["id"] for i in keep]) if keep else {}
            given = [None] * len(embed) + [vectors.get(i["id"]) for i in keep]
            self.mem.remember_many(embed + keep, vectors=given if vectors else None)

    def _file(
        self,
        record: MemoryRecord | None,
        item: dict[str, Any],
        embed: list[dict[str, Any]],
        keep: list[dict[str, Any]],
    ) -> None:
        """Count one note, and queue it for writing if needed (its ``id`` may become a renamed record's)."""
        row = self._row(item)
        if record is None:
            old = self._reclaim(row["content_hash"])
            if old is None:
                self.new += 1
                embed.append(item)
            else:
                item["id"] = old
                self.renamed += 1
                keep.append(item)
        elif not _hidden_by_hand(record):
            self._sort(record, item, row, embed, keep)
        elif record.content_hash == row["content_hash"]:
            self.unchanged += 1
        else:
            self.updated += 1
            embed.append(item)

    def _taken(self, record: MemoryRecord, rel_path: str) -> bool:
        """Whether the record under this path's id is another note's: renamed, or of another folder.

        A note of a folder that moved here is not another's; nor one forgotten in a folder
        that is gone (so that it does not come back under a new id).
        """
        if _path_of(record) not in (None, rel_path):
            return True
        folder = record.metadata.get("source_folder")
        if folder is None or folder == self.key or folder in self.adopted:
            return False
        return not (isinstance(folder, str) and folder in self.orphaned and record.deleted_at is not None)

    def _sort(
        self,
        record: MemoryRecord,
        item: dict[str, Any],
        row: dict[str, Any],
        embed: list[dict[str, Any]],
        keep: list[dict[str, Any]],
    ) -> None:
        """File a note whose record is live or was swept: count it, and queue what needs writing."""
        swept = MISSING_AT in record.metadata
        if record.content_hash != row["content_hash"]:
            self.restored += swept
            self.updated += not swept
            embed.append(item)
            return
        stored = (record.type.value, record.importance, record.pinned, list(record.tags), record.source.value)
        wanted = (row["type"], row["importance"], bool(row["pinned"]), json.loads(row["tags"]), row["source"])
        metadata = json.loads(row["metadata"])
        if swept:
            self.restored += 1
        elif stored != wanted or _without_stat(record.metadata) != _without_stat(metadata):
            self.updated += 1  # the frontmatter changed, not the text
        else:
            self.unchanged += 1
            if record.metadata == metadata:
                return  # nothing to write (otherwise the file was touched: refresh its time)
        keep.append(item)

    def _gone(self, rel_path: str) -> bool:
        """Whether nothing is at ``rel_path`` any more (a path that cannot be checked is not gone)."""
        try:
            os.lstat(os.path.join(self.key, rel_path))
        except (FileNotFoundError, NotADirectoryError):
            return True
        except (OSError, ValueError):
            return False
        return False

    def _reclaim(self, content_hash: str) -> str | None:
        """The id of a record of this folder with this text whose file is gone (a rename), if any."""
        ids = self.gone.get(content_hash)
        if not ids:
            return None
        mid = ids.pop()
        if not ids:
            del self.gone[content_hash]
        return mid

    def sweep(self, *, delete_missing: bool, hard: bool) -> tuple[int, int, tuple[str, ...]]:
        """Archive (or forget) the records of this folder (and of the adopted ones) not seen whose file is gone.

        An adopted record whose path this folder's own record holds is swept too.
        Returns how many were archived and deleted, and the first paths of those.
        """
        doomed: list[MemoryRecord] = []
        for key in (self.key, *self.adopted):
            for record in _folder_records(self.mem, key):
                path = _path_of(record)
                mid = _key(record.id)
                if path is None or mid in self.seen or record.deleted_at is not None:
                    continue
                if record.archived and not delete_missing:
                    continue  # already hidden
                if mid not in self.superseded and not self._gone(path):
                    continue  # a file this run skipped (ignored, unreadable)
                doomed.append(record)
        if not doomed:
            return 0, 0, ()
        ids = [r.id for r in doomed]
        if not hard:
            now = self.mem.clock()
            for record in doomed:  # the stamp tells a swept note from one hidden by hand
                metadata = {**record.metadata, "source_folder": self.key, MISSING_AT: now}
                self.mem.update(record.id, metadata=metadata)
        if delete_missing:
            count = self.mem.forget(ids, hard=hard)
            archived, deleted = 0, count
        else:
            archived, deleted = self.mem.archive(ids), 0
        paths = sorted(p for r in doomed if (p := _path_of(r)) is not None)
        return archived, deleted, tuple(paths[:MISSING_SHOWN])

    def retire(self) -> None:
        """Make the adopted folders' remaining records this folder's, and drop their wikilink edges.

        Those are the records hidden (by hand or by an earlier sweep) or left by a skipped
        file; forgotten ones stay as they are (a forgotten record cannot be changed).
        """
        for key in self.adopted:
            left = [r for r in _folder_records(self.mem, key) if r.deleted_at is None]
            for record in left:
                self.mem.update(record.id, metadata={**record.metadata, "source_folder": self.key})
            self.mem.graph.replace_source(source_of(key), [])


def _key(mid: str) -> int | str:
    """A uuid id as its 128-bit int (a quarter of the str's memory), any other id as it is."""
    try:
        return uuid.UUID(mid).int
    except ValueError:
        return mid


def _fields(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "content"}


def _without_stat(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k not in _FILE_STAT and k != "source_folder"}
