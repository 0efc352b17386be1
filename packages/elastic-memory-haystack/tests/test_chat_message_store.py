"""ElasticMemoryChatMessageStore: the haystack-experimental ChatMessageStore protocol."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from haystack.dataclasses import ChatMessage, ImageContent, ToolCall

from elastic_memory import Memory, UsageError
from haystack_integrations.memory_stores.elastic_memory import ElasticMemoryChatMessageStore


@pytest.fixture
def store():
    with ElasticMemoryChatMessageStore(path=":memory:", embedder=None) as s:
        yield s


def _rounds(n: int) -> list[ChatMessage]:
    out = []
    for i in range(n):
        out += [ChatMessage.from_user(f"question {i}"), ChatMessage.from_assistant(f"answer {i}")]
    return out


def test_protocol_conformance(store):
    types = pytest.importorskip("haystack_experimental.chat_message_stores.types")
    protocol = types.ChatMessageStore
    names = [n for n in dir(protocol) if not n.startswith("_") and callable(getattr(protocol, n))]
    expected = {"to_dict", "from_dict", "count_messages", "write_messages", "delete_messages", "delete_all_messages"}
    assert expected | {"retrieve_messages"} <= set(names)
    for name in names:
        ours = inspect.signature(getattr(store, name))
        for param in inspect.signature(getattr(protocol, name)).parameters.values():
            if param.name in ("self", "cls"):
                continue
            assert param.name in ours.parameters, (name, param.name)
            assert ours.parameters[param.name].default == param.default, (name, param.name)


def test_write_count_retrieve(store):
    assert store.count_messages("c1") == 0
    assert store.retrieve_messages("c1") == []
    assert store.write_messages("c1", _rounds(2)) == 4
    assert store.count_messages("c1") == 4
    assert [m.text for m in store.retrieve_messages("c1")] == ["question 0", "answer 0", "question 1", "answer 1"]
    assert [m.meta["chat_message_id"] for m in store.retrieve_messages("c1")] == ["0", "1", "2", "3"]


def test_exact_round_trip(store):
    call = ToolCall(tool_name="weather", arguments={"city": "Leeds", "days": [1, 2]}, id="call-1")
    messages = [
        ChatMessage.from_user("What's the weather?", meta={"lang": "en", "n": 1.5}, name="ada"),
        ChatMessage.from_assistant(tool_calls=[call], meta={"model": "fake"}),
        ChatMessage.from_tool("Sunny, 20 °C", origin=call),
        ChatMessage.from_assistant("Sunny 🌞 and 20 °C.", reasoning="looked it up"),
        ChatMessage.from_user(content_parts=["look", ImageContent(base64_image="aGVsbG8=", mime_type="image/png")]),
    ]
    store.write_messages("c1", messages)
    back = store.retrieve_messages("c1", last_k=100)
    expected = [
        ChatMessage.from_dict({**m.to_dict(), "meta": {"chat_message_id": str(n), **m.meta}})
        for n, m in enumerate(messages)
    ]
    assert back == expected
    assert [m.to_dict() for m in back] == [m.to_dict() for m in expected]


def test_rewriting_the_history_is_idempotent(store):
    store.write_messages("c1", _rounds(1))
    history = store.retrieve_messages("c1")
    assert store.write_messages("c1", [*history, *_rounds(2)[2:]]) == 2
    assert store.count_messages("c1") == 4
    assert store.write_messages("c1", store.retrieve_messages("c1")) == 0


def test_given_chat_message_ids_are_kept_and_deduplicated(store):
    a = ChatMessage.from_user("hi", meta={"chat_message_id": "m-1"})
    assert store.write_messages("c1", [a, a]) == 1
    assert store.write_messages("c1", [a]) == 0
    assert store.retrieve_messages("c1")[0].meta["chat_message_id"] == "m-1"


def test_system_messages(store, tmp_path: Path):
    store.write_messages("c1", [ChatMessage.from_system("Be brief."), *_rounds(1)])
    assert store.count_messages("c1") == 2
    with ElasticMemoryChatMessageStore(memory=store.memory, skip_system_messages=False) as keep:
        keep.write_messages("c2", [ChatMessage.from_system("Be brief."), *_rounds(1)])
        assert [m.role.value for m in keep.retrieve_messages("c2")] == ["system", "user", "assistant"]


def test_last_k_counts_rounds(store):
    call = ToolCall(tool_name="t", arguments={}, id="1")
    messages = [
        *_rounds(2),
        ChatMessage.from_user("use the tool"),
        ChatMessage.from_assistant(tool_calls=[call]),
        ChatMessage.from_tool("done", origin=call),
        ChatMessage.from_assistant("finished"),
    ]
    store.write_messages("c1", messages)
    assert [m.text for m in store.retrieve_messages("c1", last_k=1)] == ["use the tool", None, None, "finished"]
    assert len(store.retrieve_messages("c1", last_k=2)) == 6
    assert store.retrieve_messages("c1", last_k=0) == []
    with pytest.raises(ValueError, match="last_k"):
        store.retrieve_messages("c1", last_k=-1)


def test_default_last_k(store):
    store.write_messages("c1", _rounds(12))
    assert len(store.retrieve_messages("c1")) == 20  # 10 rounds by default
    with ElasticMemoryChatMessageStore(memory=store.memory, last_k=None) as everything:
        assert len(everything.retrieve_messages("c1")) == 24


def test_histories_are_isolated_and_deleted(store):
    store.write_messages("c1", _rounds(1))
    store.write_messages("c2", _rounds(2))
    kept = store.memory.remember("The store's own memory.")
    store.delete_messages("c1")
    assert store.count_messages("c1") == 0 and store.count_messages("c2") == 4
    store.delete_messages("nope")
    store.delete_all_messages()
    assert store.count_messages("c2") == 0
    assert store.memory.get(kept) is not None


def test_messages_stay_out_of_the_memory_loop(store):
    store.write_messages("c1", [ChatMessage.from_user("The launch code is swordfish.")])
    assert "swordfish" not in store.memory.build_context("What is the launch code?").render()


def test_write_errors(store):
    with pytest.raises(ValueError, match="list of ChatMessages"):
        store.write_messages("c1", ChatMessage.from_user("x"))
    with pytest.raises(ValueError, match="list of ChatMessages"):
        store.write_messages("c1", ["x"])
    with pytest.raises(UsageError):
        store.write_messages("", _rounds(1))
    with pytest.raises(UsageError):
        store.write_messages("c1", [ChatMessage.from_user("x", meta={"obj": object()})])
    assert store.count_messages("c1") == 0


def test_many_messages_page(store):
    store.write_messages("big", [ChatMessage.from_user(f"m{i}") for i in range(2_100)])
    back = store.retrieve_messages("big", last_k=None)
    assert store.count_messages("big") == 2_100
    assert [m.text for m in back[:3]] == ["m0", "m1", "m2"]
    assert back[-1].text == "m2099"


def test_to_dict_from_dict(tmp_path: Path):
    path = tmp_path / "chat.db"
    with ElasticMemoryChatMessageStore(path=path, embedder=None, last_k=3, agent_id="bot:chat") as store:
        store.write_messages("c1", _rounds(1))
        data = store.to_dict()
    assert data == {
        "type": "haystack_integrations.memory_stores.elastic_memory.chat_message_store.ElasticMemoryChatMessageStore",
        "init_parameters": {
            "path": str(path.resolve()),
            "agent_id": "bot:chat",
            "skip_system_messages": True,
            "last_k": 3,
            "embedder": None,
        },
    }
    with ElasticMemoryChatMessageStore.from_dict(data) as again:
        assert again.count_messages("c1") == 2


def test_memory_argument_is_left_open(tmp_path: Path):
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        store = ElasticMemoryChatMessageStore(memory=mem)
        store.write_messages("c1", _rounds(1))
        store.close()
        assert len(mem.recall("", filters={"agent_id": "default:haystack_chat"})) == 2


def test_experimental_components(tmp_path: Path):
    retrievers = pytest.importorskip("haystack_experimental.components.retrievers")
    writers = pytest.importorskip("haystack_experimental.components.writers")
    with ElasticMemoryChatMessageStore(path=tmp_path / "c.db", embedder=None) as store:
        writer = writers.ChatMessageWriter(store)
        retriever = retrievers.ChatMessageRetriever(store, last_k=1)
        assert writer.run(chat_history_id="s", messages=_rounds(2))["messages_written"] == 4
        current = [ChatMessage.from_user("question 2")]
        out = retriever.run(chat_history_id="s", current_messages=current)["messages"]
        assert [m.text for m in out] == ["question 1", "answer 1", "question 2"]
        again = type(writer).from_dict(writer.to_dict())
        assert again.chat_message_store.count_messages("s") == 4
        again.chat_message_store.close()
