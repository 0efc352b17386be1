"""What a LlamaIndex chat costs with ``ElasticMemory.from_defaults``, beside LlamaIndex's own ``Memory``.

Run from the repository root (the LlamaIndex adapter installed)::

    python benchmarks/chat_history_llamaindex.py                 # 40 chats per setup, 3 warm-up first
    python benchmarks/chat_history_llamaindex.py --chats 100 --json chat.json

**A chat.** What a request handler of a chat app does: build the memory for the request's
session, ``SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory).chat(text)``, close the
memory. ``MockLLM`` answers at once, so only memory costs count. Sessions hold 5 chats each
(a new ``session_id`` every 5 chats). Each setup runs its chats in a block of its own (warm-up
first), and its store is closed (its background work finished) before the next setup starts,
so no setup pays for another's background work.

**Setups.**

* ``llamaindex``: ``Memory.from_defaults(session_id=...)``, LlamaIndex's own (its chat history
  in an in-process SQLite database through aiosqlite; nothing persists).
* ``elastic memory=``: ``ElasticMemory.from_defaults(memory=store, session_id=...)`` on a store
  the app opened once (``Memory.open(path)``, the built-in offline model).
* ``elastic path, held``: ``ElasticMemory.from_defaults(path, session_id=...)`` while the app
  holds one ``ElasticMemory.from_defaults(path)`` open for the run: the package opens a file
  once per process, so each request finds it open.
* ``elastic path, alone``: the same with nothing else holding the file: each request opens the
  store and its close (the last user's) closes it, waiting for the turn's background work.

The built-in model is loaded before the first timed chat. The memory loop embeds a recorded
turn's chunks on its background worker; the benchmark does not wait for it between chats (a
real LLM call would give it the time), so the figures are what the chat call waits.

Output: the median and p90 milliseconds per chat of each setup, and each elastic setup's
median over LlamaIndex's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import environment, median, percentile
from elastic_memory import Memory as CoreMemory

QUESTIONS = [
    "My sister Clara lives in Porto and teaches chemistry.",
    "Which city does my sister live in?",
    "I am training for a half marathon in October.",
    "Remind me what I am training for.",
    "My cat is called Miso and she hates the vacuum cleaner.",
    "What is my cat called?",
    "I prefer window seats on long flights.",
]


def _llamaindex() -> tuple[Any, Any, Any]:
    from llama_index.core.chat_engine import SimpleChatEngine
    from llama_index.core.llms import MockLLM
    from llama_index.core.memory import Memory

    return SimpleChatEngine, MockLLM, Memory


def run(chats: int, warmup: int, folder: Path) -> dict[str, Any]:
    """Each setup's chats, timed; their medians and p90s."""
    simple_chat_engine, mock_llm, llama_memory = _llamaindex()
    from llama_index.memory.elastic_memory import ElasticMemory

    def chat(build: Callable[[str], Any], n: int) -> float:
        session = f"s{n // 5}"
        text = QUESTIONS[n % len(QUESTIONS)]
        start = time.perf_counter()
        memory = build(session)
        try:
            simple_chat_engine.from_defaults(llm=mock_llm(max_tokens=16), memory=memory).chat(text)
        finally:
            close = getattr(memory, "close", None)
            if callable(close):
                close()
        return (time.perf_counter() - start) * 1000

    def block(build: Callable[[str], Any]) -> list[float]:
        return [ms for n in range(warmup + chats) if (ms := chat(build, n)) and n >= warmup]

    timings: dict[str, list[float]] = {}
    timings["llamaindex"] = block(lambda s: llama_memory.from_defaults(session_id=s))
    with CoreMemory.open(folder / "opened.db") as store:
        store.embed_query("load the model")  # the built-in model, loaded before any timing
        timings["elastic memory="] = block(lambda s: ElasticMemory.from_defaults(memory=store, session_id=s))
    with ElasticMemory.from_defaults(folder / "held.db", session_id="app"):  # the app's holder
        held = folder / "held.db"
        timings["elastic path, held"] = block(lambda s: ElasticMemory.from_defaults(held, session_id=s))
    alone = folder / "alone.db"
    timings["elastic path, alone"] = block(lambda s: ElasticMemory.from_defaults(alone, session_id=s))
    base = median(timings["llamaindex"])
    return {
        name: {
            "median_ms": median(values),
            "p90_ms": percentile(values, 90),
            "ratio_to_llamaindex": median(values) / base,
            "chats": len(values),
        }
        for name, values in timings.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=40, help="timed chats per setup")
    parser.add_argument("--warmup", type=int, default=3, help="untimed chats per setup first")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()
    for line in environment():
        print(line)
    with tempfile.TemporaryDirectory() as tmp:
        results = run(args.chats, args.warmup, Path(tmp))
    print(f"\n{'setup':<22}{'median ms':>11}{'p90 ms':>10}{'x llamaindex':>14}")
    for name, row in results.items():
        print(f"{name:<22}{row['median_ms']:>11.1f}{row['p90_ms']:>10.1f}{row['ratio_to_llamaindex']:>14.2f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
