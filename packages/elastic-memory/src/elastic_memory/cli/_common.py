"""What the ``elastic-memory`` commands share: the options, the consoles, opening a store, reading filters.

Every command module imports this one (never the ``cli`` package, which imports them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import enum
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn, TextIO

import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from .._validate import check_json_depth
from ..core import EmbedderSpec
from ..errors import ElasticMemoryError, UsageError
from ..facade.memory import Memory
from ..loop import LoopConfig
from ..maintenance.owners import hint_others, owner_label
from ..types import Explanation, Hit
from ._table import Column, Grid

DB_ENV = "ELASTIC_MEMORY_DB"
DEFAULT_DB = Path("memory.db")


class EmbedderChoice(str, enum.Enum):
    """What ``--embedder`` accepts."""

    AUTO = "auto"
    NONE = "none"


def _embedder_spec(choice: EmbedderChoice) -> EmbedderSpec:
    """The ``embedder=`` argument of :meth:`Memory.open` for an ``--embedder`` choice."""
    return "auto" if choice is EmbedderChoice.AUTO else None


DbOption = Annotated[
    Path,
    typer.Option("--db", envvar=DB_ENV, show_envvar=True, help="The SQLite file that holds the memories."),
]
AgentOption = Annotated[
    str,
    typer.Option("--agent", help="The agent whose data this is (each agent has its own facts, lessons and graph)."),
]
UserOption = Annotated[
    str | None,
    typer.Option(
        "--user",
        help="The user of the agent whose data this is (each user has their own memories, facts and plans); "
        "unset: the agent's own.",
    ),
]
EmbedderOption = Annotated[
    EmbedderChoice,
    typer.Option(
        "--embedder",
        case_sensitive=False,
        help="'auto': the built-in offline MiniLM model. 'none': load no model; recall is keyword-only.",
    ),
]


# ----------------------------------------------------------------------- plumbing
def console_out() -> Console:
    # Made per call, so a redirected sys.stdout (tests, pipes) and $COLUMNS are honoured.
    return Console(highlight=False)


def console_err() -> Console:
    return Console(stderr=True, highlight=False)


def _fail(message: str, code: int) -> NoReturn:
    """Print ``message`` as one red line on stderr and exit with ``code``."""
    console_err().print(Text.assemble(("error: ", "bold red"), (message, "red")), soft_wrap=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Turn expected failures into one red line: exit 2 for usage errors, 1 for the rest."""
    try:
        yield
    except UsageError as e:
        _fail(str(e), 2)
    except ElasticMemoryError as e:
        _fail(str(e), 1)
    except OSError as e:
        _fail(f"{e}; check the path and its permissions", 1)


@contextlib.contextmanager
def open_memory(
    db: Path,
    embedder: EmbedderChoice,
    *,
    must_exist: bool = False,
    agent_id: str = "default",
    user_id: str | None = None,
    reads: bool = False,
) -> Iterator[Memory]:
    """Open the store at ``db`` and close it afterwards.

    Args:
        db: The database file (or ``:memory:``).
        embedder: The ``--embedder`` choice.
        must_exist: Refuse a missing file instead of creating an empty store (read-only commands).
        agent_id: Who writes (the demo writes as :data:`DEMO_AGENT`).
        user_id: The agent's user it serves (``--user``; ``None``: the agent's own).
        reads: The command only reads: no background worker (the model is not loaded ahead of a
            call that may never need it, and memories waiting for a vector are left to a command
            that writes with a model, which embeds them before it exits).

    Yields:
        The open store.

    Raises:
        UsageError: ``db`` is a folder, or ``must_exist`` and there is no file at ``db``.
    """
    if db.is_dir():
        msg = f"--db {db} is a folder; pass the path of a database file, such as {db / DEFAULT_DB}"
        raise UsageError(msg)
    if must_exist and str(db) != ":memory:" and not db.exists():
        msg = (
            f"there is no store at {db}; pass --db PATH or set {DB_ENV}, "
            "or create one with `elastic-memory add` or `elastic-memory demo --db PATH`"
        )
        raise UsageError(msg)
    loop = LoopConfig(background=False) if reads else None
    mem = Memory.open(db, embedder=_embedder_spec(embedder), agent_id=agent_id, user_id=user_id, loop=loop)
    try:
        yield mem
    finally:
        mem.close()


@contextlib.contextmanager
def spinner(description: str) -> Iterator[None]:
    """Show a transient spinner with elapsed time on stderr while the block runs (terminals only)."""
    console = console_err()
    if not console.is_terminal:
        yield
        return
    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True
    )
    with progress:
        progress.add_task(description, total=None)
        yield


class _Rate(ProgressColumn):
    """Items per second, once there is a rate."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f} {self.unit}/s", style="progress.data.speed")


def item_progress(unit: str) -> Progress:
    """A bar on stderr for a long job: done of total, the rate, the time left (terminals only)."""
    console = console_err()
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(unit),
        TimeRemainingColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


def load_model(mem: Memory, embedder: EmbedderChoice) -> None:
    """Load the embedding model now, saying so, rather than silently inside the first batch."""
    if embedder is EmbedderChoice.NONE:
        return
    console = console_err()
    status = console.status("Loading the embedding model…") if console.is_terminal else contextlib.nullcontext()
    with status, contextlib.suppress(ElasticMemoryError):  # no usable model: the job says so as it goes
        mem.embed_query("warm-up")


@contextlib.contextmanager
def interruptible(unit: str, stored: Callable[[], int]) -> Iterator[None]:
    """On Ctrl-C: say what was kept and exit 130 (each finished batch is committed; a re-run skips it)."""
    try:
        yield
    except KeyboardInterrupt:
        message = f"Interrupted: at least {stored():,} {unit} stored; run the same command again to finish."
        console_err().print(Text(message, style="yellow"), soft_wrap=True)
        raise typer.Exit(130) from None


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Print a warning (for example degraded recall) as one yellow line, not a source listing."""
    console_err().print(Text.assemble(("warning: ", "bold yellow"), (str(message), "yellow")), soft_wrap=True)


def note(message: str) -> None:
    console_err().print(Text(message, style="yellow"), soft_wrap=True)


def note_others(db: Path, what: str, agent: str, user: str | None) -> None:
    """After finding no ``what`` for ``agent``/``user``: name the other agents that hold some (stderr)."""
    hint = hint_others(db, what, agent, user)
    if hint is not None:
        note(f"note: {owner_label(agent, user)} has no {what}; {hint}")


def with_others(message: str, db: Path, what: str, agent: str, user: str | None) -> str:
    """``message`` (of a usage error), followed by the other agents that hold ``what`` when there are some."""
    hint = hint_others(db, what, agent, user)
    return message if hint is None else f"{message}; {hint}"


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError  # pragma: no cover - the loop always returns


def json_line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


# ------------------------------------------------------------------- arguments
_FLOAT_FILTERS = ("min_confidence", "min_importance")
_TIME_FILTERS = ("since", "until")
_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")


def _json_or_text(value: str, name: str) -> Any:
    check_json_depth(value, name)  # json.loads recurses: text nested thousands deep would crash it
    try:
        return json.loads(value)
    except ValueError:
        return value


def _filter_time(key: str, value: str) -> float | dt.datetime:
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        msg = f"--filter {key}= takes seconds since the epoch or an ISO date such as 2025-03-01, got {value!r}"
        raise UsageError(msg) from None


def parse_filters(items: Sequence[str]) -> dict[str, Any] | None:
    r"""The ``filters=`` dict of :meth:`Memory.recall` from ``--filter KEY=VALUE`` options.

    A repeated key collects its values into a list (``tags=a tags=b`` is ``tags`` any of
    a, b). ``min_confidence``/``min_importance`` are numbers, ``since``/``until`` epoch
    seconds or ISO dates, ``pinned`` true or false. ``metadata.KEY=VALUE`` filters on one
    metadata key; VALUE is read as JSON when it parses (``3``, ``true``, ``{"$gte": 2}``),
    else as text. Unknown keys are left for :class:`~elastic_memory.Filters` to refuse.

    >>> parse_filters(["tags=pets", "tags=health", "min_importance=0.5", "metadata.n={\"$gt\": 2}"])
    {'tags': ['pets', 'health'], 'min_importance': 0.5, 'metadata': {'n': {'$gt': 2}}}

    Args:
        items: The ``KEY=VALUE`` strings, in order.

    Returns:
        The filters, or ``None`` when there are none.

    Raises:
        UsageError: An item is not ``KEY=VALUE`` or its value has the wrong form.
    """
    filters: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            msg = f"--filter takes KEY=VALUE, such as type=semantic or metadata.project=halvorsen; got {item!r}"
            raise UsageError(msg)
        if key in _FLOAT_FILTERS:
            try:
                filters[key] = float(value)
            except ValueError:
                msg = f"--filter {key}= takes a number between 0 and 1, got {value!r}"
                raise UsageError(msg) from None
        elif key in _TIME_FILTERS:
            filters[key] = _filter_time(key, value)
        elif key == "pinned":
            if value.lower() not in _TRUE + _FALSE:
                msg = f"--filter pinned= takes true or false, got {value!r}"
                raise UsageError(msg)
            filters[key] = value.lower() in _TRUE
        elif key == "metadata":
            parsed = _json_or_text(value, "--filter metadata=")
            if not isinstance(parsed, dict):
                msg = f'--filter metadata= takes a JSON object such as \'{{"project": "halvorsen"}}\', got {value!r}'
                raise UsageError(msg)
            filters.setdefault("metadata", {}).update(parsed)
        elif key.startswith("metadata."):
            filters.setdefault("metadata", {})[key.removeprefix("metadata.")] = _json_or_text(value, f"--filter {key}=")
        elif key in filters:
            previous = filters[key]
            filters[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            filters[key] = value
    return filters or None


def parse_metadata(text: str | None) -> dict[str, Any] | None:
    """The ``--metadata`` JSON object, refused (:class:`UsageError`) when it is not one or nests too deep."""
    if text is None:
        return None
    check_json_depth(text, "--metadata")
    try:
        value = json.loads(text)
    except ValueError as e:
        msg = f'--metadata is not valid JSON ({e}); pass an object such as \'{{"project": "halvorsen"}}\''
        raise UsageError(msg) from None
    if not isinstance(value, dict):
        msg = f'--metadata must be a JSON object such as \'{{"project": "halvorsen"}}\', got {text!r}'
        raise UsageError(msg)
    return value


# ------------------------------------------------------------------- rendering
def hit_to_dict(hit: Hit, rank: int) -> dict[str, Any]:
    """A JSON-ready dict of one recall hit (enums as their values), with its ``rank``.

    Args:
        hit: The hit.
        rank: Its 1-based position in the result.

    Returns:
        Every field of the hit plus ``rank``.
    """
    data = dataclasses.asdict(hit)
    for name in ("type", "scope", "source"):
        data[name] = data[name].value
    data["tags"] = list(hit.tags)
    data["rank"] = rank
    return data


def hits_table(hits: Sequence[Hit], title: str) -> Grid:
    grid = Grid(
        [
            Column("#", justify="right", style="dim"),
            Column("id", style="dim"),
            Column("relevance", justify="right"),
            Column("score", justify="right"),
            Column("type", style="cyan"),
            Column("content", wrap=True),
            Column("tags", wrap=True, style="magenta", min_width=10),
        ],
        title=title,
    )
    for rank, hit in enumerate(hits, start=1):
        relevance = "—" if hit.relevance is None else f"{hit.relevance:.3f}"
        grid.add_row(str(rank), hit.id, relevance, _score(hit.score), hit.type.value, hit.content, ", ".join(hit.tags))
    return grid


#: The relevance (0 to 1, one scale in every mode) a hit needs for `recall` to show it. Unrelated
#: memories score exactly 0 (a cosine under 0.3, no keyword in common); the demo's answers to
#: paraphrased questions score from 0.1 and memories of a related topic from 0.03.
MIN_RELEVANCE = 0.01


def above_floor(hits: Sequence[Hit], floor: float) -> tuple[list[Hit], int]:
    """The hits at relevance ``floor`` or more (and those without a relevance: no query text), and how many not."""
    kept = [h for h in hits if h.relevance is None or h.relevance >= floor]
    return kept, len(hits) - len(kept)


def floor_line(floor: float, hidden: int) -> str:
    """The footer under recall's hits: the relevance floor, what it hid and how to change it."""
    if hidden:
        what = "1 weaker hit" if hidden == 1 else f"{hidden} weaker hits"
        return f"{what} below relevance {floor:g} hidden; --min-relevance 0 shows them."
    return f"Hits below relevance {floor:g} are hidden (--min-relevance sets the floor, 0 shows every hit)."


def _stats_rows(stats: dict[str, Any], *, brief: bool) -> list[tuple[str, str]]:
    memories = f"{stats['active_memories']} active"
    hidden = [(stats[f"{k}_memories"], k) for k in ("archived", "deleted", "expired")]
    if any(n for n, _ in hidden):
        memories += " (" + ", ".join(f"{n} {k}" for n, k in hidden if n) + f"; {stats['total_memories']} stored)"
    model = stats["embedding_model"] or "none (keyword-only)"
    if stats["embedding_model"]:
        model += f", {stats['embedding_dimension']}-d"
    vectors = str(stats["vectors"])
    if stats.get("vectors_pending"):
        vectors += f" ({stats['vectors_pending']} active memories waiting for one)"
    rows = [
        ("memories", memories),
        ("vectors", vectors),
        ("vector index", str(stats["vector_index"])),
        ("embedding model", model),
        ("db size", human_bytes(int(stats["db_size_bytes"]))),
    ]
    if brief:
        return rows

    def counts(d: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "-"

    return [
        ("path", str(stats["path"])),
        *rows[:1],
        ("by type", counts(stats["by_type"])),
        ("by scope", counts(stats["by_scope"])),
        *rows[1:],
        ("schema version", str(stats["schema_version"])),
        ("sqlite", f"{stats['sqlite_version']} ({stats['sqlite_driver']})"),
        ("sqlite-vec", str(stats["sqlite_vec_version"] or "not loaded")),
    ]


def stats_table(stats: dict[str, Any], *, brief: bool, title: str | None = None) -> Table:
    table = Table(title=title, box=box.SIMPLE, show_header=False, title_justify="left")
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for label, value in _stats_rows(stats, brief=brief):
        table.add_row(label, Text(value))
    return table


def public_stats(stats: dict[str, Any]) -> dict[str, Any]:
    # "embedder" is what this process resolved, and the CLI resolves the model only when it
    # embeds, so it would read null here; "embedding_model" (the store's pin) is the fact.
    return {k: v for k, v in stats.items() if k != "embedder"}


def degraded_note(explanation: Explanation, embedder: EmbedderChoice) -> None:
    if explanation.effective_mode is not explanation.mode:
        what = (
            "drop --embedder none to use the model" if embedder is EmbedderChoice.NONE else "see `elastic-memory stats`"
        )
        note(
            f"note: {explanation.mode.value} recall ran as keyword search (no usable embedder, or no vectors stored); "
            f"{what}"
        )


def _score(value: float) -> str:
    return f"{value:.1e}" if 0 < abs(value) < 0.001 else f"{value:.3f}"
