"""A LangGraph graph with long-term memory in ``ElasticMemoryStore``.

A two-node ``StateGraph`` compiled with ``store=``: ``remember`` saves what the user says under
``("memories", <user>)``, ``recall`` searches that namespace by meaning for the question. The
store embeds with ``ElasticMemoryEmbeddings`` (the core's built-in offline model), one vector
per indexed field; the answer comes from LangChain's fake chat model, given the memory found.

    python examples/langchain/langgraph_store.py
"""

from __future__ import annotations

import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from langchain_elastic_memory import ElasticMemoryEmbeddings, ElasticMemoryStore


class State(TypedDict, total=False):
    """The graph's state: who, what they say or ask, what was found and answered."""

    user: str
    say: str
    ask: str
    found: str
    answer: str


def build(store: ElasticMemoryStore, model: FakeListChatModel) -> Any:
    """The compiled graph: remember, then recall and answer."""

    def remember(state: State, *, store: BaseStore) -> State:
        if state.get("say"):
            store.put(("memories", state["user"]), str(uuid.uuid4()), {"text": state["say"]})
        return {}

    def recall(state: State, *, store: BaseStore) -> State:
        if not state.get("ask"):
            return {}
        hits = store.search(("memories", state["user"]), query=state["ask"], limit=1)
        found = hits[0].value["text"] if hits else ""
        answer = model.invoke(f"Memory: {found}\nQuestion: {state['ask']}").text
        return {"found": found, "answer": answer}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store)


def main() -> int:
    """Teach ana three things and ben one, then ask; 0 when each question found ana's memory."""
    with tempfile.TemporaryDirectory() as folder:
        store = ElasticMemoryStore(
            path=Path(folder) / "graph.db", index={"dims": 384, "embed": ElasticMemoryEmbeddings(), "fields": ["text"]}
        )
        app = build(store, FakeListChatModel(responses=["You like climbing.", "You drink oat milk."]))
        for said in ["I go climbing every weekend.", "I take oat milk in my coffee.", "My sister lives in Lyon."]:
            app.invoke({"user": "ana", "say": said})
        app.invoke({"user": "ben", "say": "I hate coffee."})

        first = app.invoke({"user": "ana", "ask": "What sport do I do?"})
        second = app.invoke({"user": "ana", "ask": "How do I take my coffee?"})
        for out in (first, second):
            print(f"found {out['found']!r} -> {out['answer']!r}")
        store.close()

    ok = first["found"] == "I go climbing every weekend." and second["found"] == "I take oat milk in my coffee."
    print("OK" if ok else "WRONG: each question must find ana's matching memory")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
