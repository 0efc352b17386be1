"""The per-turn cost a host pays for memory: the raw core, the three framework adapters, and peers.

Run from the repository root::

    python benchmarks/agent_turn.py                          # 2,000 and 10,000 past exchanges, 200 turns
    python benchmarks/agent_turn.py --fast-fill              # the same, filled in seconds (see Fill)
    python benchmarks/agent_turn.py --quick                  # a quick look: 300 exchanges, 20 turns, ~1-2 min
    python benchmarks/agent_turn.py --sizes 10000 --only langchain --skip-peers --fast-fill
    python benchmarks/agent_turn.py --sizes 100000 --fast-fill   # allowed, but long
    python benchmarks/agent_turn.py --fake-embedder --json turn.json

``--quick`` is ``--sizes 300 --turns 20 --warmup 3``. ``nox -s agent_turn -- ARGS`` installs
what the script needs (the four packages, LangGraph's SQLite store, mem0) and runs it.

**A turn.** A store holds N past exchanges; then turns are sent back to back, each with a
fake chat model that answers at once from a script, so only memory costs count. Every setup
gets the same user message and reply in a turn, and the setups take turns in a rotating
order (interleaved turn by turn). Turns run in conversations of 20 (a new session, thread or
chat engine every 20 turns), as the fill does. A user message is a held-out 5-10-word window
of the synthetic corpus (question-sized, like ``memory_loop.py``'s queries), a reply one of its
sentences (12-40 words).

**Setups.**

* core: ``Memory.build_context(user)`` then ``Memory.record_turn(user, reply)`` (sync facade).
* LangChain: ``create_agent`` with ``GenericFakeChatModel`` and an ``InMemorySaver``
  checkpointer (a thread per conversation), with ``ElasticMemoryMiddleware(path=...)`` and
  without it; a turn's overhead is ``agent.invoke`` with minus without, paired turn by turn.
* LlamaIndex: ``SimpleChatEngine`` over ``MockFunctionCallingLLM`` with
  ``ElasticMemory.from_defaults(memory=<open store>, session_id=...)`` (one per conversation),
  against the same engine over LlamaIndex's own ``Memory`` (same token limit); ``engine.chat``.
* Haystack: ``Agent`` over a scripted chat generator with ``memory_hooks(path=...)`` (the
  session in ``hook_context``) against the same Agent without hooks; ``agent.run``.
* Peers, driven the way LangMem drives a store (a ``search`` before the model, a ``put`` after):
  LangGraph ``InMemoryStore`` and ``SqliteStore`` (``index={"dims": 384, "embed": ...}`` with
  the same model, 10 hits), and mem0 OSS (``search`` + ``add`` of the turn's two messages with
  ``infer=False``; local Qdrant; offline, mem0 runs without its BM25 and spaCy extras, so its
  search is semantic). They run outside any agent framework: compare them with the core row.
* The embedder alone: ``embed([user message])`` on its own model instance, in the same rounds.

**Embedder.** The built-in MiniLM (what ``embedder="auto"`` loads: all-MiniLM-L6-v2 int8,
offline), one instance per store as ``"auto"`` gives, each behind a counter with the same
model id, so the output says how many times a turn calls the model and on what text.
``--fake-embedder`` uses ``ingest_recall.py``'s 384-d word-vector embedder everywhere instead.

**Fill.** The synthetic conversation of ``ingest_recall.py`` (``make_corpus``): past exchange
i is sentences 2i and 2i+1, 20 exchanges per session. elastic-memory is filled once through
``Memory.record_turn`` (no llm: the write path), the worker drained every 100 turns (it embeds
the chunks), and the closed file is copied for every elastic-memory setup. The peers get one
item per exchange, text ``"User: ...\nAssistant: ..."`` (the core's chunk text), through
their bulk paths: ``store.batch`` of 1,000 ``PutOp`` (LangGraph), ``add(infer=False)`` of 500
messages (mem0). Every text is embedded once for all stores (an in-process memo). The corpus'
pseudo-words cost the model many word pieces, so embedding 10,000 exchanges takes tens of
minutes on 2 vCPUs; ``--fast-fill`` fills with word vectors registered under MiniLM's model id
instead (the files are pinned to MiniLM; a search costs the same whatever the stored vectors
hold, but what it finds differs). Measured turns always embed with the real model.

**Background work.** elastic-memory embeds a recorded turn's chunks on its background worker,
not in ``record_turn``. After each elastic-memory turn the benchmark waits for the worker
(``drain``; column "bg p50"), as a real model call would give it time; ``--no-drain`` leaves
the worker to keep up on its own, turns back to back (a host with no model time at all);
``--think MS`` sleeps MS milliseconds after each turn instead (the model's time, in which the
worker runs as it would beside a real host). LangGraph's and mem0's writes embed inside the turn.

**Reading the output.** "p50"/"p95": ms per turn (a framework: the overhead, with minus
without). "x core": p50 over the core's per-turn p50. "embeds": embedding-model calls that
started during the turn. "beyond embeds": p50 minus embeds times the embedder-alone p50, the
part that is not the model (approximate: under load the model's time varies). Below the
table: the public ``Memory``/``AsyncMemory`` calls each adapter made per turn (count, mean
ms), and the model calls by what they embedded, in the turn and in the drain after it.
Targets (LangChain middleware overhead): at 10k p50 <= 15 ms and p95 <= 30 ms; at 100k
p50 <= 25 ms and p95 <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from _common import environment, median, percentile, section, table
from _statements import Statements
from elastic_memory import AsyncMemory, Memory, MiniLMEmbedder
from ingest_recall import WordVectorEmbedder, make_corpus
from locomo_recall import MemoEmbedder
from peers.peers import sqlite_connect  # sets the peers' telemetry-off and HF_HUB_OFFLINE variables

TURNS_PER_SESSION = 20
FILL_DRAIN_EVERY = 100
K = 10  # hits a peer's search asks for
DIM = 384
FRAMEWORKS = ("langchain", "llamaindex", "haystack")
PEERS = ("langgraph", "mem0")
TARGETS = {10_000: (15.0, 30.0), 100_000: (25.0, 50.0)}
CENSUS_METHODS = (
    "build_context",
    "record_turn",
    "recall",
    "explain",
    "remember",
    "remember_many",
    "get_many",
    "update",
    "forget",
    "tags",
    "embed_query",
)
MS = 1_000.0


# ------------------------------------------------------------------------------ embedders


class Counted:
    """An embedder behind counters (same model_id, family and dimension, so a pinned file accepts it).

    Each call is counted by what it embeds: the turn's user message, its reply, an exchange
    chunk (``"User: ..."``) or something else (a summary, a fact).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.family = inner.family
        self.dimension = inner.dimension
        self.calls = 0
        self.kinds: Counter[str] = Counter()
        self.user = self.reply = ""

    def embed(self, texts: Sequence[str]) -> Any:
        """The inner embedder's vectors; counts the call by kind."""
        self.calls += 1
        texts = list(texts)
        if texts == [self.user]:
            kind = "user message"
        elif texts == [self.reply]:
            kind = "reply"
        elif texts and all(t.startswith("User: ") for t in texts):
            kind = "exchange chunk"
        else:
            kind = "other text"
        self.kinds[kind] += 1
        return self.inner.embed(texts)


class StandIn:
    """``--fast-fill``: word vectors under the built-in model's id, so the filled file is pinned to MiniLM.

    Only the fill uses it; measured turns embed with the real model. A search costs the same
    whatever the stored vectors hold.
    """

    model_id = MiniLMEmbedder.model_id
    family = MiniLMEmbedder.family
    dimension = MiniLMEmbedder.dimension

    def __init__(self, words: Sequence[str]) -> None:
        self.inner = WordVectorEmbedder(words)

    def embed(self, texts: Sequence[str]) -> Any:
        """Word vectors (384-d, unit length)."""
        return self.inner.embed(texts)


def langchain_embeddings(embedder: Any) -> Any:
    """A LangChain ``Embeddings`` over ``embedder`` (what LangGraph's index and mem0 take)."""
    from langchain_core.embeddings import Embeddings

    class Wrapped(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return np.asarray(embedder.embed(list(texts)), dtype=np.float32).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    return Wrapped()


# ------------------------------------------------------------------------------ census


class Census:
    """Public ``Memory``/``AsyncMemory`` calls per setup during measured turns (count and seconds)."""

    def __init__(self) -> None:
        self.current: str | None = None
        self.calls: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
        self._saved: list[tuple[type, str, Any]] = []

    def install(self) -> None:
        for cls in (Memory, AsyncMemory):
            for name in CENSUS_METHODS:
                original = cls.__dict__.get(name)
                if original is None:
                    continue
                self._saved.append((cls, name, original))
                setattr(cls, name, self._wrap(original, name, asyncio.iscoroutinefunction(original)))

    def remove(self) -> None:
        for cls, name, original in self._saved:
            setattr(cls, name, original)
        self._saved.clear()

    def _note(self, name: str, seconds: float) -> None:
        if self.current is not None:
            cell = self.calls[self.current][name]
            cell[0] += 1
            cell[1] += seconds

    def _wrap(self, original: Callable[..., Any], name: str, is_async: bool) -> Callable[..., Any]:
        if is_async:

            @functools.wraps(original)
            async def awrapped(*args: Any, **kwargs: Any) -> Any:
                t = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    self._note(f"async {name}", time.perf_counter() - t)

            return awrapped

        @functools.wraps(original)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self._note(name, time.perf_counter() - t)

        return wrapped


CENSUS = Census()


STATEMENTS = Statements()


# ------------------------------------------------------------------------------ setups


class Script:
    """The reply every fake model gives in the current turn."""

    reply = ""


class Setup:
    """One row of the table: ``turn`` does one turn and returns the measured seconds."""

    name = ""
    group = ""  # rows sharing a group are a with/without pair
    with_memory = True
    counter: Counted | None = None  # the embedder of an elastic-memory setup
    memory: Memory | None = None  # drained after each turn

    def turn(self, user: str, reply: str, session: str) -> float:
        raise NotImplementedError

    def close(self) -> None:
        """Release the store."""


class CoreSetup(Setup):
    name = "core: build_context + record_turn"

    def __init__(self, path: Path, counter: Counted) -> None:
        self.counter = counter
        self.memory = Memory.open(path, embedder=counter)
        self.build: list[float] = []
        self.record: list[float] = []
        self.build_embeds: list[int] = []
        self.record_embeds: list[int] = []
        self.build_statements: list[int] = []
        self.record_statements: list[int] = []
        self.tier = ""

    def turn(self, user: str, reply: str, session: str) -> float:
        assert self.memory is not None and self.counter is not None
        calls, statements = self.counter.calls, STATEMENTS.count
        t0 = time.perf_counter()
        plan = self.memory.build_context(user, session_id=session)
        t1 = time.perf_counter()
        calls_mid, statements_mid = self.counter.calls, STATEMENTS.count
        receipt = self.memory.record_turn(user, reply, session_id=session)
        t2 = time.perf_counter()
        self.build_statements.append(statements_mid - statements)
        self.record_statements.append(STATEMENTS.count - statements_mid)
        if not receipt.ok:
            raise SystemExit(f"record_turn failed: {receipt.error}")
        self.build.append(t1 - t0)
        self.record.append(t2 - t1)
        self.build_embeds.append(calls_mid - calls)
        self.record_embeds.append(self.counter.calls - calls_mid)
        self.tier = f"{plan.tier}, plan budget {plan.budget} tokens"
        return t2 - t0

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()


class EmbedAlone(Setup):
    name = "embedder alone: embed([user message])"

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def turn(self, user: str, reply: str, session: str) -> float:
        t = time.perf_counter()
        self.embedder.embed([user])
        return time.perf_counter() - t


class LangChainAgent(Setup):
    group = "LangChain: create_agent + ElasticMemoryMiddleware"

    def __init__(self, script: Script, path: Path | None, counter: Counted | None) -> None:
        from langchain.agents import create_agent
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langgraph.checkpoint.memory import InMemorySaver

        self.with_memory = path is not None
        self.name = "  agent.invoke with the middleware" if self.with_memory else "  agent.invoke without memory"
        model = GenericFakeChatModel(messages=(script.reply for _ in itertools.count()))
        middleware = []
        self.middleware = None
        if path is not None:
            from langchain_elastic_memory import ElasticMemoryMiddleware

            self.counter = counter
            self.middleware = ElasticMemoryMiddleware(path=path, embedder=counter)
            self.memory = self.middleware.memory
            middleware.append(self.middleware)
        self.agent = create_agent(model, system_prompt="Be brief.", middleware=middleware, checkpointer=InMemorySaver())

    def turn(self, user: str, reply: str, session: str) -> float:
        t = time.perf_counter()
        out = self.agent.invoke({"messages": [("user", user)]}, {"configurable": {"thread_id": session}})
        took = time.perf_counter() - t
        if str(out["messages"][-1].content) != reply:
            raise SystemExit("LangChain: the fake model did not answer from the script")
        return took

    def close(self) -> None:
        if self.middleware is not None:
            self.middleware.close()


class LlamaIndexEngine(Setup):
    group = "LlamaIndex: SimpleChatEngine + ElasticMemory"

    def __init__(self, script: Script, path: Path | None, counter: Counted | None) -> None:
        from llama_index.core.llms import ChatMessage
        from llama_index.core.llms.mock import MockFunctionCallingLLM

        from llama_index.memory.elastic_memory import ElasticMemory  # noqa: F401 - fail here when missing

        self.with_memory = path is not None
        self.name = "  engine.chat with ElasticMemory" if self.with_memory else "  engine.chat, LlamaIndex's Memory"

        def respond(messages: Sequence[Any], **kwargs: Any) -> Any:
            return ChatMessage(role="assistant", content=script.reply)

        self.llm = MockFunctionCallingLLM(response_generator=respond)
        if path is not None:
            self.counter = counter
            self.memory = Memory.open(path, embedder=counter)
        self.session = ""
        self.engine: Any = None
        self.chat_memory: Any = None
        self.session_setup: list[float] = []

    def _start(self, session: str) -> None:
        from llama_index.core.chat_engine import SimpleChatEngine
        from llama_index.core.memory import Memory as LlamaMemory
        from llama_index.core.memory.memory import DEFAULT_TOKEN_LIMIT

        from llama_index.memory.elastic_memory import ElasticMemory

        self._end()
        t = time.perf_counter()
        if self.memory is not None:
            self.chat_memory = ElasticMemory.from_defaults(memory=self.memory, session_id=session)
        else:
            self.chat_memory = LlamaMemory.from_defaults(session_id=session, token_limit=DEFAULT_TOKEN_LIMIT)
        self.engine = SimpleChatEngine.from_defaults(llm=self.llm, memory=self.chat_memory)
        self.session_setup.append(time.perf_counter() - t)
        self.session = session

    def _end(self) -> None:
        if self.chat_memory is not None and self.memory is not None:
            self.chat_memory.close()  # records a turn left open; the store (memory=) stays open
        self.chat_memory = None

    def turn(self, user: str, reply: str, session: str) -> float:
        if session != self.session:
            self._start(session)
        t = time.perf_counter()
        out = self.engine.chat(user)
        took = time.perf_counter() - t
        if out.response != reply:
            raise SystemExit("LlamaIndex: the mock LLM did not answer from the script")
        return took

    def close(self) -> None:
        self._end()
        if self.memory is not None:
            self.memory.close()


@functools.cache
def scripted_generator() -> type:
    """A Haystack chat generator answering from a :class:`Script` (defined once per process)."""
    from haystack import component
    from haystack.dataclasses import ChatMessage

    @component
    class ScriptedGenerator:
        def __init__(self, script: Script) -> None:
            self.script = script

        @component.output_types(replies=list[ChatMessage])
        def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
            return {"replies": [ChatMessage.from_assistant(self.script.reply)]}

    return ScriptedGenerator


class HaystackAgent(Setup):
    group = "Haystack: Agent + memory_hooks"

    def __init__(self, script: Script, path: Path | None, counter: Counted | None) -> None:
        from haystack.components.agents import Agent
        from haystack.dataclasses import ChatMessage

        self.with_memory = path is not None
        self.name = "  agent.run with the memory hooks" if self.with_memory else "  agent.run without memory"
        hooks = None
        if path is not None:
            from haystack_integrations.memory_stores.elastic_memory import memory_hooks

            self.counter = counter
            hooks = memory_hooks(path=path, embedder=counter)
            self.memory = hooks["before_run"][0].memory
        self.agent = Agent(chat_generator=scripted_generator()(script), system_prompt="Be brief.", hooks=hooks)
        self.agent.warm_up()
        self.user_message = ChatMessage.from_user

    def turn(self, user: str, reply: str, session: str) -> float:
        t = time.perf_counter()
        out = self.agent.run(messages=[self.user_message(user)], hook_context={"session_id": session})
        took = time.perf_counter() - t
        if out["last_message"].text != reply:
            raise SystemExit("Haystack: the scripted generator did not answer from the script")
        return took

    def close(self) -> None:
        self.agent.close()


class LangGraphStore(Setup):
    """LangMem's per-turn use of a LangGraph store: search before the model, put after."""

    NAMESPACE = ("memories", "user-1")

    def __init__(self, kind: str, workdir: Path, embedder: Counted) -> None:
        from langgraph.store.base import PutOp

        self.peer_counter = embedder
        self.put_op = PutOp
        index = {"dims": DIM, "embed": langchain_embeddings(embedder), "fields": ["text"], "text_fields": ["text"]}
        if kind == "memory":
            from langgraph.store.memory import InMemoryStore

            self.name = "LangGraph InMemoryStore: search + put"
            self.store: Any = InMemoryStore(index=index)  # type: ignore[arg-type]
            self.conn = None
        else:
            from langgraph.store.sqlite import SqliteStore

            self.name = "LangGraph SqliteStore: search + put"
            self.conn = sqlite_connect(str(workdir / "langgraph.db"), check_same_thread=False, isolation_level=None)
            self.store = SqliteStore(self.conn, index=index)  # type: ignore[arg-type]
            self.store.setup()
        self.count = 0

    def fill(self, exchanges: Sequence[str]) -> None:
        for lo in range(0, len(exchanges), 1_000):
            ops = [
                self.put_op(self.NAMESPACE, f"past-{lo + j}", {"text": t})
                for j, t in enumerate(exchanges[lo : lo + 1_000])
            ]
            self.store.batch(ops)

    def turn(self, user: str, reply: str, session: str) -> float:
        self.count += 1
        t = time.perf_counter()
        hits = self.store.search(self.NAMESPACE, query=user, limit=K)
        self.store.put(self.NAMESPACE, f"live-{self.count}", {"text": f"User: {user}\nAssistant: {reply}"})
        took = time.perf_counter() - t
        if len(hits) != K:
            raise SystemExit(f"{self.name}: {len(hits)} hits")
        return took

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


class Mem0Store(Setup):
    """mem0 OSS with ``infer=False``: search before the model, add the exchange's two messages after."""

    name = "mem0 (infer=False): search + add"
    USER = "user-1"

    def __init__(self, workdir: Path, embedder: Counted) -> None:
        os.environ["MEM0_DIR"] = str(workdir / "mem0-home")
        from mem0 import Memory as Mem0Memory

        self.peer_counter = embedder
        self.memory_client = Mem0Memory.from_config(
            {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": "memories",
                        "embedding_model_dims": DIM,
                        "path": str(workdir / "qdrant"),
                        "on_disk": True,
                    },
                },
                "embedder": {"provider": "langchain", "config": {"model": langchain_embeddings(embedder)}},
                # never called with infer=False; the client only needs a key to be constructed
                "llm": {"provider": "openai", "config": {"api_key": "unused-offline", "model": "unused"}},
                "history_db_path": str(workdir / "mem0-history.db"),
            }
        )

    def fill(self, exchanges: Sequence[str]) -> None:
        for lo in range(0, len(exchanges), 500):
            batch = [{"role": "user", "content": t} for t in exchanges[lo : lo + 500]]
            self.memory_client.add(batch, user_id=self.USER, infer=False)

    def turn(self, user: str, reply: str, session: str) -> float:
        t = time.perf_counter()
        found = self.memory_client.search(user, filters={"user_id": self.USER}, top_k=K, threshold=0.0)
        self.memory_client.add(
            [{"role": "user", "content": user}, {"role": "assistant", "content": reply}], user_id=self.USER, infer=False
        )
        took = time.perf_counter() - t
        if len(found["results"]) != K:
            raise SystemExit(f"mem0: {len(found['results'])} hits")
        return took

    def close(self) -> None:
        self.memory_client.vector_store.client.close()  # Memory.close() leaves Qdrant open
        self.memory_client.close()


# ------------------------------------------------------------------------------ one size


def new_embedder(fake: bool, words: Sequence[str]) -> Any:
    """A fresh model instance (``"auto"`` loads one per store), or the fake word-vector embedder."""
    return WordVectorEmbedder(words) if fake else MiniLMEmbedder()


def copy_store(source: Path, target: Path) -> None:
    """Copy a closed SQLite store (and any -wal/-shm beside it)."""
    for f in source.parent.glob(source.name + "*"):
        shutil.copy2(f, target.parent / (target.name + f.name[len(source.name) :]))


def try_setup(what: str, build: Callable[[], Setup | list[Setup]], notes: list[str]) -> list[Setup]:
    """Build a setup; on failure print why (a framework missing or not offline) and go on without it."""
    try:
        made = build()
    except ImportError as e:
        notes.append(f"{what}: skipped, not installed ({e})")
        print(notes[-1])
        return []
    except Exception as e:  # a peer that cannot run here is reported, not fatal
        notes.append(f"{what}: skipped, could not run here: {type(e).__name__}: {str(e)[:300]}")
        print(notes[-1])
        traceback.print_exc(limit=3)
        return []
    return made if isinstance(made, list) else [made]


def bench_size(n: int, args: argparse.Namespace, workdir: Path, wanted: set[str]) -> dict[str, Any]:
    """Fill every store to ``n`` exchanges, then run the measured turns; returns the figures."""
    turns, warmup = args.turns, args.warmup
    live = warmup + turns
    # Past exchanges: two corpus sentences (12-40 words each). A live turn's user message is a
    # held-out 5-10-word window (question-sized, as memory_loop.py's queries), its reply a sentence.
    corpus = make_corpus(2 * n + live, live)
    texts = corpus.texts
    past = [(texts[2 * i], texts[2 * i + 1]) for i in range(n)]
    exchanges = [f"User: {u}\nAssistant: {r}" for u, r in past]
    live_pairs = [(corpus.queries[j], texts[2 * n + j]) for j in range(live)]
    fake = args.fake_embedder
    shared = WordVectorEmbedder(corpus.words) if fake else None
    if fake:
        fill_embedder: Any = shared
    else:
        fill_embedder = MemoEmbedder(StandIn(corpus.words) if args.fast_fill else MiniLMEmbedder())  # type: ignore[arg-type]
    notes: list[str] = []
    fill: dict[str, Any] = {}

    def elastic_embedder() -> Counted:
        return Counted(shared if fake else MiniLMEmbedder())

    # --- fill: every text embedded once, then elastic-memory through record_turn, then the peers
    t = time.perf_counter()
    for lo in range(0, n, 256):
        fill_embedder.embed(exchanges[lo : lo + 256])
    fill["embed_s"] = time.perf_counter() - t
    source = workdir / f"fill-{n}.db"
    t = time.perf_counter()
    from elastic_memory import LoopConfig

    with Memory.open(source, embedder=fill_embedder, loop=LoopConfig(background=False)) as mem:
        for i, (u, r) in enumerate(past):
            receipt = mem.record_turn(u, r, session_id=f"past-{i // TURNS_PER_SESSION:05d}")
            if not receipt.ok:
                raise SystemExit(f"fill: record_turn failed: {receipt.error}")
            if (i + 1) % FILL_DRAIN_EVERY == 0:
                mem.drain()
        mem.drain()
        stats, health = mem.stats(), mem.health()
    fill["elastic_s"] = time.perf_counter() - t
    fill["elastic_memories"], fill["elastic_vectors"] = stats["total_memories"], stats["vectors"]
    fill["jobs_shed"] = health["jobs_shed"]
    how = "word vectors (--fake-embedder)" if fake else "word vectors under MiniLM's id (--fast-fill)"
    how = "MiniLM" if not fake and not args.fast_fill else how
    vectors = "every memory has a vector" if stats["vectors"] >= stats["total_memories"] else "SOME WITHOUT A VECTOR"
    print(
        f"fill, {n:,} exchanges: embedding every exchange once with {how}: {fill['embed_s']:.0f} s; "
        f"elastic-memory via Memory.record_turn (no llm), the worker drained every {FILL_DRAIN_EVERY} turns: "
        f"{fill['elastic_s']:.0f} s, {stats['total_memories']:,} memories ({vectors}); "
        "the file is copied for every elastic-memory setup"
    )

    script = Script()
    setups: list[Setup] = []

    def elastic_path(name: str) -> Path:
        target = workdir / f"{name}-{n}.db"
        copy_store(source, target)
        return target

    core = CoreSetup(elastic_path("core"), elastic_embedder())
    setups.append(core)
    setups.append(EmbedAlone(new_embedder(fake, corpus.words) if not fake else shared))
    builders: dict[str, Callable[[], list[Setup]]] = {
        "langchain": lambda: [
            LangChainAgent(script, elastic_path("langchain"), elastic_embedder()),
            LangChainAgent(script, None, None),
        ],
        "llamaindex": lambda: [
            LlamaIndexEngine(script, elastic_path("llamaindex"), elastic_embedder()),
            LlamaIndexEngine(script, None, None),
        ],
        "haystack": lambda: [
            HaystackAgent(script, elastic_path("haystack"), elastic_embedder()),
            HaystackAgent(script, None, None),
        ],
    }
    for name in FRAMEWORKS:
        if name in wanted:
            setups += try_setup(name, builders[name], notes)

    peer_embedder = Counted(fill_embedder)

    def peer(build: Callable[[], Any]) -> Callable[[], Setup]:
        def made() -> Setup:
            t = time.perf_counter()
            store = build()
            store.fill(exchanges)
            fill[store.name] = time.perf_counter() - t
            return store

        return made

    if "langgraph" in wanted:
        setups += try_setup(
            "LangGraph InMemoryStore", peer(lambda: LangGraphStore("memory", workdir, peer_embedder)), notes
        )
        setups += try_setup(
            "LangGraph SqliteStore", peer(lambda: LangGraphStore("sqlite", workdir, peer_embedder)), notes
        )
    if "mem0" in wanted:
        setups += try_setup("mem0", peer(lambda: Mem0Store(workdir, peer_embedder)), notes)
        if any(isinstance(s, Mem0Store) for s in setups):
            notes.append("mem0 runs offline without spaCy and fastembed's BM25 (both download models): semantic search")
    if args.fast_fill and not fake:
        peer_embedder.inner = MiniLMEmbedder()  # the peers' measured turns embed with the real model
    for name in [s.name for s in setups if s.name in fill]:
        print(f"fill, {n:,} exchanges: {name.split(':')[0]} bulk path {fill[name]:.0f} s")

    # --- measured turns, interleaved: the order rotates every turn
    times: dict[str, list[float]] = defaultdict(list)
    background: dict[str, list[float]] = defaultdict(list)
    embeds: dict[str, list[int]] = defaultdict(list)
    model_calls: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    CENSUS.install()
    try:
        for j, (user, reply) in enumerate(live_pairs):
            measured = j >= warmup
            session = f"live-{j // TURNS_PER_SESSION:03d}" if measured else f"warm-{j:03d}"
            script.reply = reply
            shift = j % len(setups)
            for s in setups[shift:] + setups[:shift]:
                counter = s.counter or getattr(s, "peer_counter", None)
                if counter is not None:
                    counter.user, counter.reply = user, reply
                before = counter.calls if counter else 0
                kinds_before = Counter(counter.kinds) if counter else Counter()
                CENSUS.current = s.name if measured else None
                try:
                    took = s.turn(user, reply, session)
                finally:
                    CENSUS.current = None
                after = counter.calls if counter else 0
                kinds_mid = Counter(counter.kinds) if counter else Counter()
                if args.think:
                    time.sleep(args.think / 1000)  # the model's time: the worker runs in it, undrained
                elif s.memory is not None and not args.no_drain:
                    t = time.perf_counter()
                    s.memory.drain()
                    if measured:
                        background[s.name].append(time.perf_counter() - t)
                if measured:
                    times[s.name].append(took)
                    embeds[s.name].append(after - before)
                    if counter is not None:
                        model_calls[s.name]["in the turn"].update(kinds_mid - kinds_before)
                        model_calls[s.name]["after it (drain)"].update(Counter(counter.kinds) - kinds_mid)
            if j == warmup - 1:
                gc.collect()
    finally:
        CENSUS.remove()
        for s in setups:
            try:
                s.close()
            except Exception:
                traceback.print_exc(limit=2)

    # --- figures
    embed_p50 = median(times[EmbedAlone.name])
    core_p50 = median(times[core.name])

    def row(name: str, values: Sequence[float], n_embeds: float, bg: Sequence[float] = ()) -> dict[str, Any]:
        p50 = median(values)
        return {
            "setup": name,
            "p50_ms": p50 * MS,
            "p95_ms": percentile(values, 95) * MS,
            "x_core": p50 / core_p50,
            "embeds_per_turn": n_embeds,
            "beyond_embeds_ms": (p50 - n_embeds * embed_p50) * MS,
            "background_p50_ms": median(bg) * MS if bg else float("nan"),
        }

    def mean(values: Sequence[int]) -> float:
        return sum(values) / len(values) if values else float("nan")

    notes.append(
        f"core, SQLite statements per measured turn (p50): build_context {median(core.build_statements[warmup:]):.0f}, "
        f"record_turn {median(core.record_statements[warmup:]):.0f} (top-level; FTS5's own reads not counted)"
    )
    rows = [
        row("core: build_context", core.build[warmup:], mean(core.build_embeds[warmup:])),
        row("core: record_turn", core.record[warmup:], mean(core.record_embeds[warmup:])),
        row(core.name, times[core.name], mean(embeds[core.name]), background[core.name]),
    ]
    for group in dict.fromkeys(s.group for s in setups if s.group):
        pair = [s for s in setups if s.group == group]
        with_ = next((s for s in pair if s.with_memory), None)
        without = next((s for s in pair if not s.with_memory), None)
        if with_ is None or without is None:
            continue
        diff = [a - b for a, b in zip(times[with_.name], times[without.name], strict=True)]
        rows.append(
            row(
                f"{group}: overhead",
                diff,
                mean(embeds[with_.name]) - mean(embeds[without.name]),
                background[with_.name],
            )
        )
        rows.append(row(with_.name, times[with_.name], mean(embeds[with_.name])))
        rows.append(row(without.name, times[without.name], mean(embeds[without.name])))
        if isinstance(with_, LlamaIndexEngine):
            notes.append(
                f"LlamaIndex: building ElasticMemory.from_defaults(memory=...) + the engine per conversation: "
                f"p50 {median(with_.session_setup) * MS:.1f} ms; LlamaIndex's Memory + engine: "
                f"p50 {median(without.session_setup) * MS:.1f} ms (not in the turn figures)"  # type: ignore[attr-defined]
            )
    for s in setups:
        if isinstance(s, LangGraphStore | Mem0Store):
            rows.append(row(s.name, times[s.name], mean(embeds[s.name])))
    rows.append(row(EmbedAlone.name, times[EmbedAlone.name], 1.0))

    census = {
        name: {method: {"per_turn": c / turns, "ms_per_turn": secs / turns * MS} for method, (c, secs) in calls.items()}
        for name, calls in CENSUS.calls.items()
    }
    CENSUS.calls.clear()
    calls_per_turn = {
        name: {when: {kind: c / turns for kind, c in kinds.items()} for when, kinds in by_when.items()}
        for name, by_when in model_calls.items()
    }
    return {
        "size": n,
        "turns": turns,
        "embedder": "fake word vectors" if fake else MiniLMEmbedder.model_id,
        "tier": core.tier,
        "fill": fill,
        "rows": rows,
        "census": census,
        "model_calls": calls_per_turn,
        "notes": notes,
    }


def print_size(result: dict[str, Any]) -> None:
    n = result["size"]
    title = (
        f"{n:,} past exchanges, {result['turns']} measured turns, embedder {result['embedder']}, "
        f"tier {result['tier']}; "
        "ms per turn (a framework: its overhead = with minus without, paired turn by turn)"
    )
    headers = ["setup", "p50", "p95", "x core", "embeds", "beyond embeds", "bg p50"]
    cells = [
        [
            r["setup"],
            r["p50_ms"],
            r["p95_ms"],
            r["x_core"],
            r["embeds_per_turn"],
            r["beyond_embeds_ms"],
            r["background_p50_ms"],
        ]
        for r in result["rows"]
    ]
    print(table(title, headers, cells))
    print(
        "x core: p50 / the core's per-turn p50; embeds: embedding-model calls per turn in the measured part; "
        "beyond embeds: p50 minus embeds x the embedder-alone p50; bg p50: the background worker's drain after "
        "the turn (embedding the recorded chunks), not in p50"
    )
    if result["census"]:
        print()
        print("Public Memory / AsyncMemory calls per measured turn (count, ms) by setup:")
        for name, calls in result["census"].items():
            parts = [
                f"{method} {c['per_turn']:.2f}x {c['ms_per_turn']:.1f} ms"
                for method, c in sorted(calls.items(), key=lambda kv: -kv[1]["ms_per_turn"])
            ]
            print(f"  {name.strip()}: " + "; ".join(parts))
    if result["model_calls"]:
        print()
        print("Embedding-model calls per measured turn, by what they embed (in the turn / in the drain after it):")
        for name, by_when in result["model_calls"].items():
            parts = [
                f"{when}: " + (", ".join(f"{c:.2f} {kind}" for kind, c in sorted(kinds.items())) or "none")
                for when, kinds in by_when.items()
            ]
            print(f"  {name.strip()}: " + "; ".join(parts))
    for note in result["notes"]:
        print(f"note: {note}")


def targets(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    by_size = {r["size"]: r for r in results}
    for size, (p50_target, p95_target) in TARGETS.items():
        result = by_size.get(size)
        row = None
        if result is not None:
            row = next(
                (r for r in result["rows"] if r["setup"].startswith("LangChain") and "overhead" in r["setup"]), None
            )
        if row is None:
            line = f"LangChain middleware overhead at {size:,}: not measured in this run"
            out.append({"size": size, "measured": False, "line": line})
            continue
        p50_ok, p95_ok = row["p50_ms"] <= p50_target, row["p95_ms"] <= p95_target
        line = (
            f"LangChain middleware overhead at {size:,}: p50 {row['p50_ms']:.1f} ms (target <= {p50_target:.0f}) "
            f"{'met' if p50_ok else 'not met'}; p95 {row['p95_ms']:.1f} ms (target <= {p95_target:.0f}) "
            f"{'met' if p95_ok else 'not met'}; embedder {result['embedder']}"  # type: ignore[index]
        )
        out.append({"size": size, "measured": True, "p50_met": p50_ok, "p95_met": p95_ok, "line": line})
    return out


def plain(value: Any) -> Any:
    """``value`` with NaN as ``None`` (strict JSON)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def quiet_offline_peers() -> None:
    """mem0 logs, at every construction, that spaCy and fastembed's BM25 are missing offline; say it once."""
    import logging

    logging.getLogger("mem0").setLevel(logging.ERROR)
    try:
        from loguru import logger

        logger.disable("fastembed")
    except ImportError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2000,10000", help="past exchanges per store, comma-separated")
    parser.add_argument("--turns", type=int, default=200, help="measured turns per size")
    parser.add_argument("--warmup", type=int, default=5, help="turns before measuring (load models and indexes)")
    parser.add_argument("--fake-embedder", action="store_true", help="the word-vector embedder instead of MiniLM")
    parser.add_argument("--skip-peers", action="store_true", help="no LangGraph stores, no mem0")
    parser.add_argument(
        "--only", default="", help=f"comma-separated subset of {','.join(FRAMEWORKS + PEERS)} (the core always runs)"
    )
    parser.add_argument(
        "--fast-fill",
        action="store_true",
        help="fill with word vectors under MiniLM's model id (measured turns still use MiniLM); "
        "the fill then takes seconds instead of embedding every past exchange",
    )
    parser.add_argument("--no-drain", action="store_true", help="do not wait for the background worker between turns")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="sleep this many ms after each turn instead of draining (the model's time)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--quick", action="store_true", help="--sizes 300 --turns 20 --warmup 3")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.turns, args.warmup = "300", 20, 3
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    wanted = set(FRAMEWORKS + PEERS)
    if args.only:
        chosen = {w.strip() for w in args.only.split(",") if w.strip()}
        unknown = chosen - wanted - {"core"}
        if unknown:
            parser.error(f"--only: unknown {sorted(unknown)}; choose from {', '.join(FRAMEWORKS + PEERS)}")
        wanted &= chosen
    if args.skip_peers:
        wanted -= set(PEERS)
    if args.turns < 1 or args.warmup < 1 or not sizes:
        parser.error("--turns and --warmup must be at least 1, and --sizes must name a size")
    header = environment()
    print("\n".join(header))
    if wanted & set(PEERS):
        quiet_offline_peers()
    workdir = Path(tempfile.mkdtemp(prefix="em-agent-turn-"))
    results = []
    try:
        for n in sizes:
            section(f"{n:,} past exchanges")
            folder = workdir / str(n)
            folder.mkdir()
            STATEMENTS.install()  # before the stores open: every connection they open is traced
            try:
                results.append(bench_size(n, args, folder, wanted))
            finally:
                STATEMENTS.remove()
            shutil.rmtree(folder, ignore_errors=True)  # each size's stores go before the next size fills
            print()
            print_size(results[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    section("targets")
    checks = targets(results)
    for check in checks:
        print(check["line"])
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                plain(
                    {
                        "environment": header,
                        "args": vars(args) | {"json": str(args.json)},
                        "sizes": results,
                        "targets": checks,
                    }
                ),
                indent=2,
                default=str,
                allow_nan=False,
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
