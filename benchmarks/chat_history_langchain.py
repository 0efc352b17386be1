"""What one ``invoke`` costs with LangChain's chat-history factory idiom, before and after issue 43.

Run from the repository root::

    python benchmarks/chat_history_langchain.py                 # 40 invokes per setup (8 for "before")
    python benchmarks/chat_history_langchain.py --invokes 100 --history 200

The chain is ``RunnableWithMessageHistory(prompt | FakeListChatModel, get_session_history=...)``,
LangChain's own fake model answering at once, so only the history costs count. Setups, taking
turns invoke by invoke (interleaved) on one session that already holds ``--history`` messages:

* **in-memory**: ``InMemoryChatMessageHistory`` from a dict (LangChain's reference): the chain's
  own overhead, no storage.
* **after**: ``lambda sid: ElasticMemoryChatMessageHistory(sid, path=DB)``, the idiom as written:
  one store per path per process, shared by every history object; messages stored as kind
  ``"message"`` (never embedded); no model without ``record=True``.
* **before**: what the same idiom did in 0.1.0, rebuilt from the core: each call opened the file
  with its own built-in model instance (``embedder="auto"``), and each message was a note
  embedded inline, so every invoke loaded the model and embedded both messages. The store is
  closed after each invoke here (0.1.0 left it open until exit).

Prints each setup's median and p90 per invoke (ms) and the history's own cost (the setup's
median minus in-memory's), side by side. The goal of issue 43: "after" under 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from _common import environment, percentile, section, table
from elastic_memory import Memory
from elastic_memory.embedders import MiniLMEmbedder
from langchain_elastic_memory import ElasticMemoryChatMessageHistory

SESSION = "bench"


class Before(ElasticMemoryChatMessageHistory):
    """0.1.0's behaviour: a store and a model instance of its own, messages written as embedded notes."""

    def __init__(self, session_id: str, path: Path) -> None:
        self.opened_memory = Memory.open(path, embedder=MiniLMEmbedder())
        super().__init__(session_id, memory=self.opened_memory)

    def _items(self, batch: list[BaseMessage], first: int) -> list[dict[str, Any]]:
        return [{**item, "kind": "note"} for item in super()._items(batch, first)]


def chain(factory: Callable[[str], BaseChatMessageHistory], replies: int) -> Any:
    model = FakeListChatModel(responses=[f"Reply number {n}, short and to the point." for n in range(replies)])
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RunnableWithMessageHistory is deprecated upstream
        return RunnableWithMessageHistory(
            prompt | model, factory, input_messages_key="question", history_messages_key="history"
        )


def seed(history: BaseChatMessageHistory, count: int) -> None:
    messages: list[BaseMessage] = []
    for n in range(count // 2):
        messages += [HumanMessage(f"Earlier question {n} about the project plan?"), AIMessage(f"Earlier answer {n}.")]
    if messages:
        history.add_messages(messages)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invokes", type=int, default=40, help="measured invokes per setup (default 40)")
    parser.add_argument("--before-invokes", type=int, default=8, help="measured invokes of 'before' (default 8)")
    parser.add_argument("--history", type=int, default=20, help="messages already in the session (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured invokes per setup first (default 2)")
    args = parser.parse_args()
    print("\n".join(environment()))

    folder = Path(tempfile.mkdtemp(prefix="chat-bench-"))
    after_db, before_db = folder / "after.db", folder / "before.db"
    store: dict[str, InMemoryChatMessageHistory] = {}
    opened: list[Before] = []

    def before_factory(sid: str) -> Before:
        history = Before(sid, before_db)
        opened.append(history)
        return history

    total = args.warmup + args.invokes
    setups: dict[str, Any] = {
        "in-memory": chain(lambda sid: store.setdefault(sid, InMemoryChatMessageHistory()), total),
        "after": chain(lambda sid: ElasticMemoryChatMessageHistory(sid, path=after_db), total),
        "before": chain(before_factory, args.warmup + args.before_invokes),
    }
    seed(store.setdefault(SESSION, InMemoryChatMessageHistory()), args.history)
    with ElasticMemoryChatMessageHistory(SESSION, path=after_db, embedder=None) as history:
        seed(history, args.history)
    with Memory.open(before_db, embedder=None) as mem:
        seed(ElasticMemoryChatMessageHistory(SESSION, memory=mem), args.history)

    times: dict[str, list[float]] = {name: [] for name in setups}
    for n in range(total):
        for name, runnable in setups.items():
            if name == "before" and n >= args.warmup + args.before_invokes:
                continue
            started = time.perf_counter()
            runnable.invoke(
                {"question": f"Question {n}: what did we decide?"}, {"configurable": {"session_id": SESSION}}
            )
            elapsed = (time.perf_counter() - started) * 1000
            while opened:
                opened.pop().opened_memory.close()
            if n >= args.warmup:
                times[name].append(elapsed)
            print(f"\r  invoke {n + 1}/{total}", end="", file=sys.stderr)
    print(file=sys.stderr)

    base = statistics.median(times["in-memory"])
    rows = [
        (
            name,
            len(values),
            statistics.median(values),
            percentile(values, 90),
            statistics.median(values) - base,
            statistics.median(values) / statistics.median(times["after"]),
        )
        for name, values in times.items()
    ]
    section(f"RunnableWithMessageHistory.invoke, factory idiom, {args.history} earlier messages in the session")
    print(table("ms per invoke", ["setup", "invokes", "median", "p90", "history cost", "x after"], rows))
    after = statistics.median(times["after"])
    print(f"\ngoal: 'after' under 50 ms per invoke -> {after:.1f} ms ({'met' if after < 50 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
