"""``elastic-memory demo``: a sample store, three questions, and keyword, semantic and hybrid recall side by side."""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from ..errors import UsageError
from ..facade.memory import Memory
from ..types import Explanation, Hit, RecallMode
from ._common import (
    EmbedderChoice,
    EmbedderOption,
    console_out,
    note,
    open_memory,
    public_stats,
    reported,
    spinner,
    stats_table,
)
from ._demo_loop import show_loop

__all__ = ["DEMO_MEMORIES", "DEMO_QUESTIONS", "register"]


def _turn(session: str, speaker: str, content: str, type_: str, importance: float, *tags: str) -> dict[str, Any]:
    return {
        "content": content,
        "session_id": session,
        "type": type_,
        "importance": importance,
        "tags": list(tags),
        "source": "user_confirmed" if speaker == "user" else "agent",
        "metadata": {"speaker": speaker},
    }


#: A scripted conversation over three sessions, as the memories an agent would keep.
DEMO_MEMORIES: tuple[dict[str, Any], ...] = (
    _turn("s1-onboarding", "user", "Hi, I'm Priya Raman, a data engineer.", "semantic", 0.9, "identity"),
    _turn("s1-onboarding", "user", "I live in Lisbon, near the Alfama district.", "semantic", 0.7, "home"),
    _turn(
        "s1-onboarding",
        "user",
        "Please use metric units: kilometres, kilograms and degrees Celsius.",
        "procedural",
        0.8,
        "preferences",
    ),
    _turn("s1-onboarding", "user", "Keep answers short, with bullet points.", "procedural", 0.6, "preferences"),
    _turn(
        "s1-onboarding",
        "assistant",
        "Noted: metric units and short bulleted answers from now on.",
        "episodic",
        0.3,
        "preferences",
    ),
    _turn("s2-home", "user", "My dog is called Biscuit; he is a three-year-old beagle.", "semantic", 0.8, "dog"),
    _turn("s2-home", "user", "Biscuit's vet is Dr. Okonkwo at the Estrela clinic.", "semantic", 0.6, "dog", "health"),
    _turn("s2-home", "user", "I'm allergic to peanuts and shellfish.", "semantic", 1.0, "food", "health"),
    _turn("s2-home", "user", "I'm vegetarian, so no meat in recipes.", "semantic", 0.8, "food"),
    _turn(
        "s2-home",
        "assistant",
        "I'll leave peanuts, shellfish and meat out of every recipe I suggest.",
        "episodic",
        0.4,
        "food",
    ),
    _turn("s2-home", "user", "I run 5 km every morning before work.", "semantic", 0.5, "habits"),
    _turn("s3-work", "user", "The Halvorsen migration project is due on Friday 14 March.", "semantic", 0.9, "work"),
    _turn("s3-work", "user", "Send the weekly status report to Kwame Osei every Thursday.", "procedural", 0.7, "work"),
    _turn("s3-work", "user", "Our team sync is on Tuesdays at 10:00.", "semantic", 0.5, "work"),
    _turn(
        "s3-work",
        "assistant",
        "I'll remind you about the Halvorsen deadline on Monday 10 March.",
        "episodic",
        0.6,
        "work",
    ),
)


@dataclasses.dataclass(frozen=True)
class DemoQuestion:
    """One demo question, the memory that answers it, and what it shows."""

    text: str
    """The question asked of every mode."""
    answer: str
    """A piece of the memory that answers it."""
    lesson: str
    """What to look for in the three columns."""


DEMO_QUESTIONS: tuple[DemoQuestion, ...] = (
    DemoQuestion(
        "What pet do I have?",
        "My dog is called Biscuit",
        "A paraphrase: not one word in common with the memory, so keyword search has nothing to match; "
        "the vector leg matches the meaning.",
    ),
    DemoQuestion(
        "What can't I eat?",
        "allergic to peanuts",
        "Another paraphrase, and the one that matters most: only meaning links 'eat' to 'allergic'.",
    ),
    DemoQuestion(
        "When is the Halvorsen project due?",
        "Halvorsen migration project",
        "Shared words and shared meaning: every mode agrees.",
    ),
    DemoQuestion(
        "When does Estrela open?",
        "Estrela clinic",
        "A rare name means little to an embedding model, which drifts to memories about times; "
        "for BM25 it is an exact, rare word. Keyword pins it down, and hybrid keeps it on top.",
    ),
)

_MODES = (RecallMode.KEYWORD, RecallMode.SEMANTIC, RecallMode.HYBRID)


def _rank_of(hits: Sequence[Hit], answer: str) -> int | None:
    return next((n for n, h in enumerate(hits, start=1) if answer in h.content), None)


def _demo_cell(hit: Hit | None, answer: str) -> Text:
    if hit is None:
        return Text("")
    found = answer in hit.content
    cell = Text("✓ " if found else "", style="bold green")
    cell.append(hit.content, style="green" if found else "")
    cell.append(f"  {hit.score:.2f}", style="dim")
    return cell


def _demo_table(question: DemoQuestion, results: dict[RecallMode, Explanation]) -> Table:
    table = Table(
        title=Text.assemble(("Q: ", "bold"), (question.text, "bold cyan")),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        expand=True,
    )
    table.add_column("#", justify="right", style="dim", width=2)
    for mode in _MODES:
        ran = results[mode].effective_mode
        header = mode.value if ran is mode else f"{mode.value} → {ran.value}"
        table.add_column(header, ratio=1)
    for row in range(3):
        cells = []
        for mode in _MODES:
            hits = results[mode].hits
            if row == 0 and not hits:
                cells.append(Text("no match", style="italic red"))
            else:
                cells.append(_demo_cell(hits[row] if row < len(hits) else None, question.answer))
        table.add_row(str(row + 1), *cells)
    return table


def _demo_verdict(question: DemoQuestion, results: dict[RecallMode, Explanation]) -> Text:
    line = Text("   ")
    for n, mode in enumerate(_MODES):
        rank = _rank_of(results[mode].hits, question.answer)
        if n:
            line.append(" · ", style="dim")
        line.append(f"{mode.value} ")
        line.append(
            f"#{rank}" if rank else "missed",
            style="bold green" if rank == 1 else "bold red" if not rank else "bold yellow",
        )
    return line


def _demo_store_table() -> Table:
    table = Table(box=box.SIMPLE_HEAD, title="What the agent remembered", title_justify="left", expand=True)
    table.add_column("who", style="dim")
    table.add_column("content", ratio=1)
    table.add_column("type", style="cyan")
    table.add_column("imp.", justify="right")
    table.add_column("tags", style="magenta")
    session = None
    for item in DEMO_MEMORIES:
        if item["session_id"] != session:
            session = item["session_id"]
            table.add_row("", Text(f"session {session}", style="bold"), end_section=False)
        table.add_row(
            item["metadata"]["speaker"],
            Text(item["content"]),
            item["type"],
            f"{item['importance']:.1f}",
            ", ".join(item["tags"]),
        )
    return table


#: The author of every memory the demo writes: how ``demo --db`` tells its own store from yours.
DEMO_AGENT = "elastic-memory-demo"


def _refuse_foreign_store(mem: Memory, path: Path) -> None:
    """Raise :class:`UsageError` unless the store at ``path`` is empty or holds only what a demo wrote."""
    total = int(mem.stats()["total_memories"])
    if total == 0:
        return
    demo_made = total <= 1000 and total == len(
        mem.recall("", k=1000, filters={"agent_id": DEMO_AGENT}, mode="keyword", touch=False)
    )
    if not demo_made:
        msg = (
            f"{path} already holds a store that the demo did not make; the demo writes only "
            "to a new file or to its own earlier store: pass another --db path, such as demo.db"
        )
        raise UsageError(msg)


def demo(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help=(
                "Keep the demo store in this file: a new file, or one an earlier demo made (the demo never "
                "writes into another store). Default: a temporary file, removed at the end."
            ),
        ),
    ] = None,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
) -> None:
    """Store a scripted conversation, ask it questions in every recall mode, then run the memory loop."""
    out = console_out()
    with reported(), contextlib.ExitStack() as stack:
        if db is None:
            folder = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="elastic-memory-demo-", ignore_cleanup_errors=True)
            )
            path = Path(folder) / "demo.db"
        else:
            path = db
        with open_memory(path, embedder, agent_id=DEMO_AGENT) as mem:
            if db is not None:
                _refuse_foreign_store(mem, path)
            out.print(_demo_store_table())
            model = "the built-in model (offline)" if embedder is EmbedderChoice.AUTO else "no model"
            with spinner(f"Storing {len(DEMO_MEMORIES)} memories, embedded with {model}"):
                ids = mem.remember_many(list(DEMO_MEMORIES))
            new = sum(i.status == "created" for i in ids)
            where = f"{path}" if db is not None else "a temporary store"
            out.print(
                Text(
                    f"Stored {len(ids)} memories from 3 sessions in {where}"
                    + ("" if new == len(ids) else f" ({new} new, {len(ids) - new} already there)")
                    + ".\n"
                ),
                soft_wrap=True,
            )
            keyword_only = False
            for question in DEMO_QUESTIONS:
                results = {m: mem.explain(question.text, k=3, mode=m.value) for m in _MODES}
                degraded = results[RecallMode.HYBRID].effective_mode is RecallMode.KEYWORD
                keyword_only = keyword_only or degraded
                out.print(_demo_table(question, results))
                out.print(_demo_verdict(question, results))
                if not degraded:  # the lessons are about what vectors change; without them they would not hold
                    out.print(Text(f"   {question.lesson}", style="dim italic"), soft_wrap=True)
                out.print()
            if keyword_only:
                note(
                    "note: no vectors were used, so semantic and hybrid ran as keyword search; "
                    "run `elastic-memory demo` without --embedder none to see the difference"
                )
            show_loop(mem, out)
            out.print(stats_table(public_stats(mem.stats()), brief=True, title="The store"))
    example = f"elastic-memory recall {shlex.quote(DEMO_QUESTIONS[0].text)}"
    if db is None:
        hint = (
            f"That store was temporary. Keep one with `elastic-memory demo --db demo.db`, then `{example} --db demo.db`"
        )
    else:
        hint = f"Query it yourself: `{example} --db {shlex.quote(str(db))}`"
    out.print(Text(hint, style="bold"), soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``demo`` to the ``elastic-memory`` app."""
    app.command()(demo)
