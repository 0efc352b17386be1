"""Opening a core with its memory loop attached: what ``Memory.open`` and a federation's tiers open.

:meth:`MemoryCore.open <elastic_memory.core.MemoryCore.open>` opens the store alone; here the
options are split (the core's to it, ``llm``, ``context_tokens``, ``loop`` and ``ram_probe`` to
the loop), the loop is built and attached, the model's load starts and the embedding backlog is
queued. :func:`loop_of` is the loop of a core opened here (or of a user's handle on one).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core import MemoryCore
from ..errors import UsageError
from .config import LoopConfig
from .engine import MemoryLoop
from .inputs import check_loop_args

__all__ = ["LOOP_OPTIONS", "check_loop_options", "check_options", "loop_of", "open_core"]


async def open_core(
    path: str | Path,
    *,
    llm: Callable[..., str] | None = None,
    context_tokens: int = 8_192,
    loop: LoopConfig | None = None,
    ram_probe: Callable[[], int] | None = None,
    **options: Any,
) -> MemoryCore:
    """Open the store at ``path`` (``options`` are :meth:`MemoryCore.open`'s) with its memory loop attached.

    ``llm``, ``context_tokens`` and ``loop`` are checked before anything is opened.
    """
    check_loop_options(llm=llm, context_tokens=context_tokens, loop=loop)
    core = await MemoryCore.open(path, **options)
    attached = MemoryLoop(core, loop or LoopConfig(), llm=llm, context_tokens=context_tokens, probe=ram_probe)
    core.attach(attached)
    if attached.config.background and attached.may_embed():  # the governor's tier may rule the model out
        core.preload()
    await attached.resume()  # memories an earlier process left without a vector: embedded in the background
    return core


#: The options the memory loop takes, with their defaults (the others are :meth:`MemoryCore.open`'s).
LOOP_OPTIONS: dict[str, Any] = {
    p.name: p.default for p in inspect.signature(open_core).parameters.values() if p.kind is p.KEYWORD_ONLY
}


def check_options(options: Mapping[str, Any]) -> None:
    """Validate :func:`open_core`'s keyword ``options`` without opening anything.

    A federation checks them before it creates a folder; an unknown name is a :class:`UsageError`
    that lists every option.
    """
    known = [name for name in inspect.signature(MemoryCore.open).parameters if name != "path"] + list(LOOP_OPTIONS)
    unknown = sorted(set(options) - set(known), key=str)
    if unknown:
        msg = f"unknown option(s) {unknown}; the options are {known}"
        raise UsageError(msg)
    MemoryCore.check_options({name: value for name, value in options.items() if name not in LOOP_OPTIONS})
    given = {**LOOP_OPTIONS, **{name: value for name, value in options.items() if name in LOOP_OPTIONS}}
    check_loop_options(llm=given["llm"], context_tokens=given["context_tokens"], loop=given["loop"])


def check_loop_options(*, llm: Any, context_tokens: Any, loop: Any) -> None:
    """Validate the loop's options of :func:`open_core` (``ram_probe`` is the host's own probe, taken as given)."""
    if loop is not None and not isinstance(loop, LoopConfig):
        msg = f"loop must be a LoopConfig, got {type(loop).__name__}"
        raise UsageError(msg)
    check_loop_args(llm, context_tokens)


def loop_of(core: MemoryCore) -> MemoryLoop:
    """The memory loop attached to ``core`` (by :func:`open_core`; a user's handle has its own)."""
    for part in core.parts:
        if isinstance(part, MemoryLoop):
            return part
    msg = "no memory loop is attached to this core: open it with elastic_memory.loop.attach.open_core"
    raise LookupError(msg)
