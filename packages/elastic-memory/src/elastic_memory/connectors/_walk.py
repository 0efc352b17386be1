"""Walking a notes folder (I/O): never through a symlink, never outside the root.

Where the platform can (Linux, macOS, the BSDs) the walk holds a file descriptor per open
directory and opens every child relative to it with ``O_NOFOLLOW``, so a directory swapped
for a symlink mid-scan cannot lead the walk outside the root. Elsewhere it walks paths and
relies on ``DirEntry`` never following symlinks. Whatever vanishes or cannot be read while
walking is counted and skipped; only the root itself failing raises.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import stat
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["FileRef", "Tally", "read_note", "walk"]

_FD_WALK = os.scandir in os.supports_fd and os.open in os.supports_dir_fd
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
Handle = int | str


@dataclass
class Tally:
    """Counters of one scan (mutable while it runs; published as a ``ScanReport``)."""

    scanned: int = 0
    parsed: int = 0
    skipped_large: int = 0
    skipped_binary: int = 0
    skipped_symlink: int = 0
    skipped_ignored: int = 0
    bad_frontmatter: int = 0
    errors: int = 0


@dataclass(frozen=True)
class FileRef:
    """One note file found by :func:`walk`: its root-relative POSIX path and how to open it."""

    rel_path: str
    name: str
    parent: Handle
    mtime_ns: int
    size: int


def walk(root: str, extensions: tuple[str, ...], ignore: Sequence[str], tally: Tally) -> Iterator[FileRef]:
    """Every note file under ``root`` (dot-entries, symlinks and ignored paths skipped and counted).

    Raises:
        OSError: The root cannot be opened (the tree below never raises).
    """
    top: Handle = os.open(root, _DIR_FLAGS) if _FD_WALK else root
    if not _FD_WALK and not os.path.isdir(root):
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", root)
    stack: list[tuple[Handle, str, Iterator[str]]] = [(top, "", iter(()))]
    try:
        subdirs = yield from _scan_dir(top, "", extensions, ignore, tally)
        stack[-1] = (top, "", iter(subdirs))
        while stack:
            handle, rel, pending = stack[-1]
            name = next(pending, None)
            if name is None:
                stack.pop()
                _close(handle)
                continue
            try:
                child = _open_dir(handle, name)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    tally.skipped_symlink += 1
                else:
                    tally.errors += 1
                continue
            child_rel = f"{rel}{name}/"
            stack.append((child, child_rel, iter(())))
            subdirs = yield from _scan_dir(child, child_rel, extensions, ignore, tally)
            stack[-1] = (child, child_rel, iter(subdirs))
    finally:
        for handle, _, _ in stack:  # what a generator closed early still holds open
            _close(handle)


def read_note(ref: FileRef, limit: int) -> tuple[bytes, int, int]:
    """The bytes of ``ref`` (at most ``limit + 1``), with the mtime and size of what was read.

    Raises:
        OSError: The file vanished, is not readable, is not a regular file, or is now a
            symlink (``errno.ELOOP``).
    """
    if isinstance(ref.parent, int):
        fd = os.open(ref.name, _FILE_FLAGS, dir_fd=ref.parent)
    else:
        path = os.path.join(ref.parent, ref.name)
        if os.path.islink(path):
            raise OSError(errno.ELOOP, "is a symlink", path)
        fd = os.open(path, _FILE_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", ref.rel_path)
        parts: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            part = os.read(fd, min(remaining, 1 << 20))
            if not part:
                break
            parts.append(part)
            remaining -= len(part)
    finally:
        os.close(fd)
    return b"".join(parts), info.st_mtime_ns, info.st_size


def _scan_dir(
    handle: Handle, rel: str, extensions: tuple[str, ...], ignore: Sequence[str], tally: Tally
) -> Generator[FileRef, None, list[str]]:
    """The note files of one directory; returns (as the generator's value) its subdirectory names."""
    try:
        with os.scandir(handle) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        tally.errors += 1
        return []
    subdirs: list[str] = []
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        path = rel + name
        try:
            if entry.is_symlink():
                tally.skipped_symlink += 1
                continue
            if entry.is_dir(follow_symlinks=False):
                if not _utf8(name):
                    tally.skipped_binary += 1
                elif _ignored(path, ignore, directory=True):
                    tally.skipped_ignored += 1
                else:
                    subdirs.append(name)
                continue
            if not entry.is_file(follow_symlinks=False) or not name.lower().endswith(extensions):
                continue
            tally.scanned += 1
            if not _utf8(name):
                tally.skipped_binary += 1
                continue
            if _ignored(path, ignore, directory=False):
                tally.skipped_ignored += 1
                continue
            info = entry.stat(follow_symlinks=False)
        except OSError:
            tally.errors += 1
            continue
        yield FileRef(path, name, handle, info.st_mtime_ns, info.st_size)
    return subdirs


def _open_dir(parent: Handle, name: str) -> Handle:
    if isinstance(parent, int):
        return os.open(name, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=parent)
    path = os.path.join(parent, name)
    if os.path.islink(path) or not os.path.isdir(path):
        raise OSError(errno.ELOOP if os.path.islink(path) else errno.ENOENT, "not a plain directory", path)
    return path


def _close(handle: Handle) -> None:
    if isinstance(handle, int):
        with contextlib.suppress(OSError):  # a descriptor we opened; closing it only fails if already closed
            os.close(handle)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a non-UTF-8 name decoded with surrogateescape
        return False
    return True


def _ignored(path: str, globs: Sequence[str], *, directory: bool) -> bool:
    candidates = (path, path + "/") if directory else (path,)
    return any(fnmatch.fnmatchcase(c, g) for g in globs for c in candidates)
