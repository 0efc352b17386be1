"""The ``elastic-memory`` command line: try the library, inspect a store, move memories in and out.

Every command works on one SQLite file: ``--db PATH``, else ``$ELASTIC_MEMORY_DB``, else
``./memory.db``. ``--embedder auto`` (the default) uses the built-in offline MiniLM model;
``--embedder none`` loads no model and keeps recall keyword-only.

Expected failures print one red line that says what to do, and exit with 2 when the input
was wrong (:class:`~elastic_memory.UsageError`) or 1 when something failed::

    $ elastic-memory demo
    $ elastic-memory add "The user's dog is called Biscuit." --tag pets --type semantic
    $ elastic-memory recall "what pet do I have" -k 3 --filter tags=pets --min-relevance 0.1
    $ elastic-memory list --filter tags=pets --state all
    $ elastic-memory forget 3f2a... && elastic-memory restore 3f2a...
    $ elastic-memory facts set user.dog_name Biscuit
    $ elastic-memory graph path user "Acme Robotics"
    $ elastic-memory backup memory.db backup.db
    $ elastic-memory export memories.jsonl --vectors
    $ elastic-memory quarantine list
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import enum
import json
import shlex
import sys
import tempfile
import warnings
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

from . import (
    __version__,
    _cli_backup,
    _cli_check,
    _cli_facts,
    _cli_graph,
    _cli_ingest,
    _cli_lessons,
    _cli_mcp,
    _cli_memories,
    _cli_quarantine,
    _cli_repair,
    _cli_ui,
)
from ._cli_table import Column, Grid
from ._core import EmbedderSpec
from ._demo_loop import show_loop
from ._owners import hint_others, owner_label
from ._validate import build_row, check_json_depth
from .errors import ElasticMemoryError, UsageError
from .loop import LoopConfig
from .memory import Memory
from .types import Explanation, Hit, MemoryType, RecallMode

__all__ = ["app", "main"]

DB_ENV = "ELASTIC_MEMORY_DB"
DEFAULT_DB = Path("memory.db")


class EmbedderChoice(str, enum.Enum):
    """What ``--embedder`` accepts."""

    AUTO = "auto"
    NONE = "none"


def _embedder_spec(choice: EmbedderChoice) -> EmbedderSpec:
    """The ``embedder=`` argument of :meth:`Memory.open` for an ``--embedder`` choice."""
    return "auto" if choice is EmbedderChoice.AUTO else None


app = typer.Typer(
    name="elastic-memory",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_show_locals=False,  # locals would print memory contents into bug reports
    context_settings={"help_option_names": ["-h", "--help"]},
)

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
def _spinner(description: str) -> Iterator[None]:
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


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Print a warning (for example degraded recall) as one yellow line, not a source listing."""
    console_err().print(Text.assemble(("warning: ", "bold yellow"), (str(message), "yellow")), soft_wrap=True)


def _note(message: str) -> None:
    console_err().print(Text(message, style="yellow"), soft_wrap=True)


def note_others(db: Path, what: str, agent: str, user: str | None) -> None:
    """After finding no ``what`` for ``agent``/``user``: name the other agents that hold some (stderr)."""
    hint = hint_others(db, what, agent, user)
    if hint is not None:
        _note(f"note: {owner_label(agent, user)} has no {what}; {hint}")


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


def _json_line(data: dict[str, Any]) -> str:
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


def _hits_table(hits: Sequence[Hit], title: str) -> Grid:
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


def _floor_line(floor: float, hidden: int) -> str:
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


def _stats_table(stats: dict[str, Any], *, brief: bool, title: str | None = None) -> Table:
    table = Table(title=title, box=box.SIMPLE, show_header=False, title_justify="left")
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for label, value in _stats_rows(stats, brief=brief):
        table.add_row(label, Text(value))
    return table


def _public_stats(stats: dict[str, Any]) -> dict[str, Any]:
    # "embedder" is what this process resolved, and the CLI resolves the model only when it
    # embeds, so it would read null here; "embedding_model" (the store's pin) is the fact.
    return {k: v for k, v in stats.items() if k != "embedder"}


def _degraded_note(explanation: Explanation, embedder: EmbedderChoice) -> None:
    if explanation.effective_mode is not explanation.mode:
        what = (
            "drop --embedder none to use the model" if embedder is EmbedderChoice.NONE else "see `elastic-memory stats`"
        )
        _note(
            f"note: {explanation.mode.value} recall ran as keyword search (no usable embedder, or no vectors stored); "
            f"{what}"
        )


def _score(value: float) -> str:
    return f"{value:.1e}" if 0 < abs(value) < 0.001 else f"{value:.3f}"


# -------------------------------------------------------------------- commands
def _version(value: bool) -> None:
    if value:
        typer.echo(f"elastic-memory {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Long-term memory for AI agents in one SQLite file: keyword, semantic and hybrid recall.

    Start with [bold]elastic-memory demo[/bold]. Stores default to $ELASTIC_MEMORY_DB, else ./memory.db.
    """
    _tolerant_output()


def _tolerant_output() -> None:
    r"""Let stdout and stderr print any path: a file name that is not UTF-8 shows as ``\udc80``, never a crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            with contextlib.suppress(ValueError, OSError):  # a stream that cannot change keeps its ways
                reconfigure(errors="backslashreplace")


@app.command()
def add(
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What to remember.", show_default=False)],
    db: DbOption = DEFAULT_DB,
    type_: Annotated[MemoryType, typer.Option("--type", help="What kind of memory it is.")] = MemoryType.SEMANTIC,
    importance: Annotated[float, typer.Option(min=0.0, max=1.0, help="How much it matters, from 0 to 1.")] = 0.5,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="A tag; repeat for more.")] = None,
    session: Annotated[str | None, typer.Option(help="The conversation or session it came from.")] = None,
    metadata: Annotated[
        str | None, typer.Option(help='A JSON object of your own fields, e.g. \'{"project": "halvorsen"}\'.')
    ] = None,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
    agent: AgentOption = "default",
    user: UserOption = None,
) -> None:
    """Remember TEXT; prints whether it was created (or already stored) and its id."""
    with reported():
        fields = parse_metadata(metadata)
        # checked before the store is opened, so bad input never creates an empty database file
        build_row(
            text,
            now=0.0,
            default_agent=agent,
            type=type_.value,
            importance=importance,
            tags=tag,
            session_id=session,
            metadata=fields,
            user_id=user,
        )
        with open_memory(db, embedder, agent_id=agent, user_id=user) as mem:
            mid = mem.remember(
                text, type=type_.value, importance=importance, tags=tag, session_id=session, metadata=fields
            )
    style = {"created": "green", "updated": "cyan"}.get(mid.status, "yellow")
    line = Text.assemble((mid.status, f"bold {style}"), " ", str(mid))
    if mid.status == "duplicate":
        line.append(" (this content was already stored; nothing new was written)", style="dim")
    console_out().print(line, soft_wrap=True)


@app.command()
def recall(
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="What to look for. An empty string lists memories by importance.")
    ],
    db: DbOption = DEFAULT_DB,
    k: Annotated[int, typer.Option("-k", "--top-k", min=1, max=1000, help="How many memories to return.")] = 5,
    mode: Annotated[RecallMode, typer.Option(help="keyword (BM25), semantic (vectors) or both fused.")] = (
        RecallMode.HYBRID
    ),
    filter_: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            "-f",
            metavar="KEY=VALUE",
            help=(
                "Narrow the search; repeat for more. Keys: type, tags, tags_all, session_id, source, scope, "
                "min_importance, min_confidence, since, until, pinned, metadata.KEY (JSON or text)."
            ),
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per hit, one per line.")] = False,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="Only this agent's memories (default: every agent's; with --user: 'default')."),
    ] = None,
    user: Annotated[str | None, typer.Option("--user", help="Only this user's memories (of --agent).")] = None,
    min_relevance: Annotated[
        float,
        typer.Option(
            "--min-relevance",
            "--min-score",
            min=0.0,
            max=1.0,
            help="Hide hits less relevant than this (0 to 1, one scale in every mode; 0 shows every hit).",
        ),
    ] = MIN_RELEVANCE,
) -> None:
    """Find the memories that best match QUERY (a pure read: no access is recorded)."""
    owner = agent or "default"
    with reported():
        # a user's handle reads only that user's memories; an agent's own handle reads every agent's unless filtered
        by_agent = [f"agent_id={agent}"] if agent is not None and user is None else []
        filters = parse_filters([*(filter_ or []), *by_agent])
        with open_memory(db, embedder, must_exist=True, agent_id=owner, user_id=user, reads=True) as mem:
            explanation = mem.explain(query, k=k, mode=mode.value, filters=filters)
    _degraded_note(explanation, embedder)
    hits, hidden = above_floor(explanation.hits, min_relevance)
    if as_json:
        for rank, hit in enumerate(hits, start=1):
            typer.echo(_json_line(hit_to_dict(hit, rank)))
        if hidden:
            _note(f"note: {_floor_line(min_relevance, hidden)}")
        return
    out = console_out()
    if not hits:
        out.print(Text(f"No memory matches {query!r} ({mode.value}).", style="dim"), soft_wrap=True)
        if hidden:
            out.print(Text(_floor_line(min_relevance, hidden), style="dim"))
        elif agent is not None or user is not None:
            note_others(db, "memories", owner, user)
        return
    title = f"{mode.value} recall of {query!r}" if query.strip() else "memories by importance"
    out.print(_hits_table(hits, title))
    if query.strip() and min_relevance > 0:
        out.print(Text(_floor_line(min_relevance, hidden), style="dim"))


@app.command()
def stats(
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as one JSON object.")] = False,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
) -> None:
    """Show counts, the vector index, the embedding model and the file size of a store."""
    with reported(), open_memory(db, embedder, must_exist=True, reads=True) as mem:
        data = _public_stats(mem.stats())
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))
        return
    console_out().print(_stats_table(data, brief=False))


@app.command("export")
def export(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="The JSONL file to write (replaced if it exists).")],
    db: DbOption = DEFAULT_DB,
    vectors: Annotated[bool, typer.Option(help="Include each memory's vector (no re-embedding on import).")] = False,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
) -> None:
    """Write the whole store to PATH as JSON lines: memories (hidden ones too), turns, facts with history, the graph."""
    with (
        reported(),
        open_memory(db, embedder, must_exist=True, reads=True) as mem,
        _spinner(f"Exporting {db} to {path}"),
    ):
        count = mem.export_jsonl(path, vectors=vectors)
    extra = " with their vectors" if vectors else ""
    console_out().print(Text(f"Exported {count} memories{extra} to {path}."), soft_wrap=True)


@app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A JSONL export (from `elastic-memory export`).")],
    db: DbOption = DEFAULT_DB,
    embedder: EmbedderOption = EmbedderChoice.AUTO,
) -> None:
    """Read an export into the store: ids, times and counters kept, existing rows updated (a re-run is safe)."""
    progress = item_progress("records")
    task = progress.add_task(f"Importing {path}", total=None)
    done = [0]

    def advance(written: int, total: int) -> None:
        done[0] = written
        progress.update(task, completed=written, total=total)

    with reported(), interruptible("records", lambda: done[0]):
        if not path.is_file():
            msg = f"{path} is not a file; pass the path of a JSONL export made by `elastic-memory export`"
            raise UsageError(msg)
        with open_memory(db, embedder) as mem:
            load_model(mem, embedder)
            with progress:
                report = mem.import_jsonl(path, progress=advance)
    others = ", ".join(f"{n} {kind}" for kind, n in report.records.items() if kind != "memory")
    console_out().print(
        Text(
            f"Imported {report.total} memories into {db}: {report.created} created, "
            f"{report.updated} updated, {report.duplicates} duplicates"
            + (f"; and {others} records." if others else ".")
        ),
        soft_wrap=True,
    )


# ------------------------------------------------------------------------ demo
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


@app.command()
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
            with _spinner(f"Storing {len(DEMO_MEMORIES)} memories, embedded with {model}"):
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
                _note(
                    "note: no vectors were used, so semantic and hybrid ran as keyword search; "
                    "run `elastic-memory demo` without --embedder none to see the difference"
                )
            show_loop(mem, out)
            out.print(_stats_table(_public_stats(mem.stats()), brief=True, title="The store"))
    example = f"elastic-memory recall {shlex.quote(DEMO_QUESTIONS[0].text)}"
    if db is None:
        hint = (
            f"That store was temporary. Keep one with `elastic-memory demo --db demo.db`, then `{example} --db demo.db`"
        )
    else:
        hint = f"Query it yourself: `{example} --db {shlex.quote(str(db))}`"
    out.print(Text(hint, style="bold"), soft_wrap=True)


_cli_ingest.register(app)
_cli_memories.register(app)
_cli_facts.register(app)
_cli_lessons.register(app)
_cli_graph.register(app)
_cli_quarantine.register(app)
_cli_backup.register(app)
_cli_repair.register(app)
_cli_check.register(app)
_cli_mcp.register(app)
_cli_ui.register(app)


def main() -> None:
    """Run the command line; the ``elastic-memory`` console script calls this."""
    warnings.showwarning = _show_warning
    app(prog_name="elastic-memory")


if __name__ == "__main__":  # pragma: no cover
    main()
