"""ElasticMemoryChatMessageHistory: exact round trips, order, sessions, clear, record, async."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core._api.deprecation import LangChainDeprecationWarning
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from elastic_memory import LoopConfig, Memory, UsageError
from langchain_elastic_memory import ElasticMemoryChatMessageHistory


@pytest.fixture
def mem() -> Iterator[Memory]:
    """A fresh in-memory store without an embedder, background work only on drain."""
    memory = Memory.open(":memory:", embedder=None, loop=LoopConfig(tier="standard", background=False))
    yield memory
    memory.close()


def every_kind() -> list[BaseMessage]:
    """One message of each type, with the fields a round trip could lose."""
    return [
        SystemMessage("Be brief.", id="s1"),
        HumanMessage(
            content=[
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
            additional_kwargs={"client": {"v": 2}},
            id="h1",
        ),
        AIMessage(
            "",
            tool_calls=[{"name": "lookup", "args": {"q": "cats", "n": 2}, "id": "call-1", "type": "tool_call"}],
            usage_metadata={"input_tokens": 3, "output_tokens": 5, "total_tokens": 8},
            response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
            id="a1",
        ),
        ToolMessage("3 cats", tool_call_id="call-1", artifact={"rows": [1, 2, 3]}, status="success", id="t1"),
        FunctionMessage(content="42", name="answer", id="f1"),
        ChatMessage(content="Pardon?", role="critic", id="c1"),
        AIMessageChunk(content="Partial", id="a2"),
        AIMessage("A cat.", name="bot", additional_kwargs={"refusal": None}, id="a3"),
    ]


def test_every_message_type_round_trips_exactly(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("s", memory=mem)
    history.add_messages(every_kind())
    assert history.messages == every_kind()
    assert [type(m) for m in history.messages] == [type(m) for m in every_kind()]


def test_messages_keep_their_order_when_times_tie() -> None:
    with Memory.open(":memory:", embedder=None, clock=lambda: 1_000.0) as frozen:
        history = ElasticMemoryChatMessageHistory("s", memory=frozen)
        for n in range(5):
            history.add_messages([HumanMessage(f"q{n}"), AIMessage(f"a{n}")])
        history.add_message(HumanMessage("last"))
        assert [m.text for m in history.messages] == [*(t for n in range(5) for t in (f"q{n}", f"a{n}")), "last"]


def test_a_session_longer_than_one_recall_page_reads_in_order(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("long", memory=mem)
    history.add_messages([HumanMessage(f"message {n}") for n in range(1_200)])
    history.add_messages([AIMessage("the end")])
    assert [m.text for m in history.messages] == [*(f"message {n}" for n in range(1_200)), "the end"]


def test_add_messages_writes_the_batch_in_one_call(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    batches: list[int] = []
    real = mem.remember_many

    def counting(items: Any, **kwargs: Any) -> Any:
        items = list(items)
        batches.append(len(items))
        return real(items, **kwargs)

    monkeypatch.setattr(mem, "remember_many", counting)
    monkeypatch.setattr(mem, "remember", None)
    ElasticMemoryChatMessageHistory("s", memory=mem).add_messages(every_kind())
    assert batches == [len(every_kind())]


def test_the_same_text_is_stored_twice(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("s", memory=mem)
    history.add_messages([HumanMessage("ok"), HumanMessage("ok")])
    history.add_user_message("ok")
    assert [m.text for m in history.messages] == ["ok", "ok", "ok"]


def test_sessions_are_separate(mem: Memory) -> None:
    ElasticMemoryChatMessageHistory("a", memory=mem).add_messages([HumanMessage("for a")])
    ElasticMemoryChatMessageHistory("b", memory=mem).add_messages([HumanMessage("for b")])
    assert [m.text for m in ElasticMemoryChatMessageHistory("a", memory=mem).messages] == ["for a"]


def test_clear_removes_only_that_session(mem: Memory) -> None:
    kept = mem.remember("The user likes tea.")
    a = ElasticMemoryChatMessageHistory("a", memory=mem)
    b = ElasticMemoryChatMessageHistory("b", memory=mem)
    a.add_messages([HumanMessage("one"), AIMessage("two")])
    b.add_messages([HumanMessage("three")])
    a.clear()
    assert a.messages == []
    assert [m.text for m in b.messages] == ["three"]
    assert mem.get(kept) is not None


def test_clear_erases_the_messages(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("a", memory=mem)
    history.add_messages([HumanMessage("secret")])
    history.clear()
    assert mem.stats()["active_memories"] == 0
    assert mem.recall("secret", mode="keyword") == []


def test_history_survives_reopening_the_file(tmp_path: Path) -> None:
    with ElasticMemoryChatMessageHistory("s", path=tmp_path / "h.db", embedder=None) as history:
        history.add_messages(every_kind())
    with ElasticMemoryChatMessageHistory("s", path=tmp_path / "h.db", embedder=None) as again:
        assert again.messages == every_kind()


def test_messages_stay_out_of_the_memory_loop(mem: Memory) -> None:
    ElasticMemoryChatMessageHistory("s", memory=mem).add_messages([HumanMessage("My cat is called Tom.")])
    assert mem.build_context("What is my cat called?", session_id="other").render() == ""
    assert mem.facts.get("user.cat_name") is None


def test_messages_live_under_a_dedicated_agent_id(mem: Memory) -> None:
    ElasticMemoryChatMessageHistory("s", memory=mem).add_messages([HumanMessage("hello")])
    ElasticMemoryChatMessageHistory("s", memory=mem, agent_id="support-bot").add_messages([HumanMessage("hi")])
    assert sorted(h.agent_id for h in mem.recall("", filters={"kind": "message"})) == [
        "default:chat_history",
        "support-bot",
    ]


def test_record_feeds_exchanges_to_the_memory_loop(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("monday", memory=mem, record=True)
    history.add_messages([HumanMessage("My dog is called Biscuit."), AIMessage("What a lovely name!")])
    assert mem.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]
    assert '"Biscuit" (key=user.dog_name)' in mem.build_context("What is my dog called?", session_id="x").render()


def test_record_pairs_a_reply_added_later(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("monday", memory=mem, record=True)
    history.add_user_message("My dog is called Biscuit.")
    history.add_ai_message("What a lovely name!")
    hits = mem.recall("Biscuit", mode="keyword", filters={"agent_id": "default", "session_id": "monday"})
    assert [h.content for h in hits] == ["User: My dog is called Biscuit.\nAssistant: What a lovely name!"]


def test_without_record_no_turn_is_kept(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("monday", memory=mem)
    history.add_messages([HumanMessage("My dog is called Biscuit."), AIMessage("What a lovely name!")])
    assert mem.health()["turns"] == 0


def test_a_field_that_is_not_json_is_refused_and_nothing_is_stored(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("s", memory=mem)
    bad = ToolMessage("done", tool_call_id="c", artifact=object())
    with pytest.raises(UsageError, match=r"messages\[1\] \(ToolMessage\) cannot be stored"):
        history.add_messages([HumanMessage("hi"), bad])
    assert history.messages == []


@pytest.mark.parametrize("given", ["hello", HumanMessage("hello"), ["hello"]])
def test_add_messages_takes_only_messages(mem: Memory, given: Any) -> None:
    with pytest.raises(UsageError, match=r"add_messages takes a sequence of messages|not a LangChain message"):
        ElasticMemoryChatMessageHistory("s", memory=mem).add_messages(given)


@pytest.mark.parametrize(
    ("session_id", "kwargs", "message"),
    [
        ("", {"path": ":memory:"}, "session_id must be a non-empty string"),
        ("s", {}, "pass exactly one of path="),
        ("s", {"path": ":memory:", "agent_id": " "}, "agent_id must be a non-empty string"),
        ("s", {"path": ":memory:", "record": 1}, "record must be True or False"),
    ],
)
def test_bad_arguments_are_refused(session_id: str, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ElasticMemoryChatMessageHistory(session_id, embedder=None, **kwargs)


async def test_async_twins_use_async_memory(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    history = ElasticMemoryChatMessageHistory("s", memory=mem)
    for name in ("recall", "remember_many", "forget"):
        monkeypatch.setattr(mem, name, None)  # the sync facade must not be used
    await history.aadd_messages(every_kind())
    assert await history.aget_messages() == every_kind()
    await history.aclear()
    assert await history.aget_messages() == []


async def test_async_record_feeds_the_memory_loop(mem: Memory) -> None:
    history = ElasticMemoryChatMessageHistory("monday", memory=mem, record=True)
    await history.aadd_messages([HumanMessage("My dog is called Biscuit."), AIMessage("What a lovely name!")])
    assert mem.facts.get("user.dog_name").value == "Biscuit"  # type: ignore[union-attr]


def test_runnable_with_message_history_sees_the_earlier_exchange(mem: Memory) -> None:
    model = FakeMessagesListChatModel(responses=[AIMessage("Hello Ada!"), AIMessage("You are Ada.")])
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    seen: list[list[BaseMessage]] = []

    def keep(value: PromptValue) -> PromptValue:
        seen.append(value.to_messages())
        return value

    with pytest.warns(LangChainDeprecationWarning, match="RunnableWithMessageHistory is deprecated"):
        chain = RunnableWithMessageHistory(
            prompt | RunnableLambda(keep) | model,
            lambda session_id: ElasticMemoryChatMessageHistory(session_id, memory=mem),
            input_messages_key="question",
            history_messages_key="history",
        )
    config: Any = {"configurable": {"session_id": "chat-1"}}
    chain.invoke({"question": "I am Ada."}, config)
    chain.invoke({"question": "Who am I?"}, config)
    assert [(m.type, m.text) for m in seen[1]] == [("human", "I am Ada."), ("ai", "Hello Ada!"), ("human", "Who am I?")]
    stored = ElasticMemoryChatMessageHistory("chat-1", memory=mem).messages
    assert [m.text for m in stored] == ["I am Ada.", "Hello Ada!", "Who am I?", "You are Ada."]
