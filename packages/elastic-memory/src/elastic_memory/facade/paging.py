"""Listing a store's memories page by page: :class:`Page` and what ``AsyncMemory.list`` runs.

Pages are keyset pages on the insertion order (the rows' ``seq``): a page's ``next`` cursor
names the last row it holds, so rows written or deleted meanwhile never shift a page, and
reading page N costs the same as reading page 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..filters import Filters
from ..storage.queries import STATES
from ..types import MemoryRecord

if TYPE_CHECKING:
    from ..core import MemoryCore

__all__ = ["Page", "list_page"]

_PREFIX = "seq:"
#: The largest ``seq`` (an SQLite INTEGER); a larger cursor was not made by a page.
_MAX_SEQ = 2**63 - 1


@dataclass(frozen=True)
class Page:
    """One page of :meth:`AsyncMemory.list`: its ``records`` (oldest first) and the cursor of the next one.

    ``next`` is ``None`` on the last page; otherwise pass it as ``after=`` to read on.
    """

    records: tuple[MemoryRecord, ...]
    next: str | None


def _state(state: Any) -> str:
    if state not in STATES:
        msg = f"state must be one of {list(STATES)}, got {state!r}"
        raise UsageError(msg)
    return str(state)


def _limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        msg = f"limit must be an integer from 1 to 1000, got {limit!r}"
        raise UsageError(msg)
    return limit


def _after(after: Any) -> int:
    if after is None:
        return 0
    text = after if isinstance(after, str) else ""
    digits = text.removeprefix(_PREFIX)
    valid = text.startswith(_PREFIX) and digits.isascii() and digits.isdigit()
    if not valid or len(digits) > len(str(_MAX_SEQ)) or int(digits) > _MAX_SEQ:
        msg = f"after must be the `next` cursor of an earlier page (such as 'seq:42'), got {after!r}"
        raise UsageError(msg)
    return int(digits)


async def list_page(core: MemoryCore, filters: Any, *, state: Any, limit: Any, after: Any) -> Page:
    """The page of ``core``'s store that ``AsyncMemory.list`` documents."""
    parsed, chosen, size, start = Filters.parse(core.scoped(filters)), _state(state), _limit(limit), _after(after)
    await core.store.refresh()  # another process may have written
    rows = await core.store.page(parsed, state=chosen, after=start, limit=size + 1)
    more = len(rows) > size
    rows = rows[:size]
    return Page(tuple(r for _, r in rows), f"{_PREFIX}{rows[-1][0]}" if more else None)
