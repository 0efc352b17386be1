"""Many users in one store: each user's memory, plans and chat history are their own.

One agent's store serves Alice and Bob through a real ``SimpleChatEngine``:
``ElasticMemory.from_defaults(memory=mem, user_id=...)`` takes ``mem.for_user(user_id)``. The
LLM is LlamaIndex's ``MockFunctionCallingLLM`` answering from a script and keeping every input
(``MockLLM`` echoes its prompt back, which would be recorded as the reply).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer

from elastic_memory import AsyncMemory, LoopConfig, UsageError
from elastic_memory import Memory as CoreMemory
from llama_index.memory.elastic_memory import ElasticMemory, ElasticMemoryBlock
from llama_index.retrievers.elastic_memory import ElasticMemoryRetriever
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore

ALICE_SAYS = "My name is Alice Novak and I'm allergic to peanuts."
ASKED = "What is my name and what am I allergic to?"
#: Alice's words, her facts' values and her turn, as they could show up anywhere.
ALICES = ("Alice", "Novak", "peanut")
SYSTEM = "You are a helpful assistant."
LOOP = LoopConfig(tier="standard", background=False)


def scripted(*replies: str) -> tuple[MockFunctionCallingLLM, list[list[ChatMessage]]]:
    """LlamaIndex's mock function-calling LLM answering from a script; the list gets every input."""
    received: list[list[ChatMessage]] = []
    script = iter(replies)

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        received.append([m.model_copy(deep=True) for m in messages])
        return ChatMessage(role=MessageRole.ASSISTANT, content=next(script))

    return MockFunctionCallingLLM(response_generator=respond), received


def prompt(messages: list[ChatMessage]) -> str:
    return "\n".join(m.content or "" for m in messages)


def alices_in(text: str) -> list[str]:
    return [word for word in ALICES if word.lower() in text.lower()]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[CoreMemory]:
    """One agent's store (a file), the agent's own handle."""
    with CoreMemory.open(tmp_path / "users.db", agent_id="assistant", embedder=None, loop=LOOP) as m:
        yield m


async def chat(mem: CoreMemory, user_id: str, session_id: str, text: str, reply: str = "Noted.") -> list[ChatMessage]:
    """One exchange of ``user_id`` in ``session_id`` through a chat engine; what the LLM received."""
    llm, received = scripted(reply)
    async with ElasticMemory.from_defaults(memory=mem, user_id=user_id, session_id=session_id) as memory:
        await SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM).achat(text)
    (sent,) = received
    return sent


# ---------------------------------------------------------------------- two users, one store
async def test_bobs_llm_prompt_holds_nothing_of_alices(mem: CoreMemory) -> None:
    await chat(mem, "alice", "alice-1", ALICE_SAYS)
    sent = await chat(mem, "bob", "bob-1", ASKED)
    assert [(m.role, m.content) for m in sent] == [(MessageRole.SYSTEM, SYSTEM), (MessageRole.USER, ASKED)]
    assert alices_in(prompt(sent)) == []


async def test_bobs_plan_recall_and_facts_hold_nothing_of_alices(mem: CoreMemory) -> None:
    await chat(mem, "alice", "alice-1", ALICE_SAYS)
    async with ElasticMemory.from_defaults(memory=mem, user_id="bob", session_id="bob-1") as bob:
        assert bob.user_id == "bob"
        assert await bob.block.aget([ChatMessage(role="user", content=ASKED)], session_id="bob-1") == ""
        assert bob.memory.recall("Alice Novak peanuts", mode="keyword") == []
        assert bob.memory.facts.list() == []


async def test_alices_next_session_recalls_her_name_and_allergy(mem: CoreMemory) -> None:
    await chat(mem, "alice", "alice-1", ALICE_SAYS)
    await chat(mem, "bob", "bob-1", "My name is Bob Stone and I'm allergic to cats.")
    system, memory, question = await chat(mem, "alice", "alice-2", ASKED, reply="Alice Novak; peanuts.")
    assert (system.content, question.content) == (SYSTEM, ASKED)
    assert '"Alice Novak" (key=user.name)' in (memory.content or "")
    assert '"peanuts" (key=user.allergies)' in (memory.content or "")
    assert "Bob" not in (memory.content or "") and "cats" not in (memory.content or "")


async def test_the_same_session_id_of_two_users_is_two_conversations(mem: CoreMemory) -> None:
    await chat(mem, "alice", "s", ALICE_SAYS)
    sent = await chat(mem, "bob", "s", ASKED)  # Bob's history holds only his own question
    assert [m.content for m in sent] == [SYSTEM, ASKED]
    async with ElasticMemory.from_defaults(memory=mem, user_id="alice", session_id="s") as alice:
        assert [m.content for m in await alice.aget_all()] == [ALICE_SAYS, "Noted."]


async def test_the_agents_own_memory_holds_nothing_of_its_users(mem: CoreMemory) -> None:
    await chat(mem, "alice", "alice-1", ALICE_SAYS)
    llm, received = scripted("I don't know.")
    async with ElasticMemory.from_defaults(memory=mem, session_id="alice-1") as own:
        assert own.user_id is None
        await SimpleChatEngine.from_defaults(llm=llm, memory=own).achat(ASKED)
    assert alices_in(prompt(received[0])) == []


# ---------------------------------------------------------------------- the chat stores
def test_a_users_chat_store_keeps_their_keys_apart(mem: CoreMemory) -> None:
    alice = ChatMemoryBuffer.from_defaults(chat_store=ElasticMemoryChatStore(memory=mem, user_id="alice"))
    bob = ChatMemoryBuffer.from_defaults(chat_store=ElasticMemoryChatStore(memory=mem.for_user("bob")))
    assert alice.chat_store_key == bob.chat_store_key == "chat_history"  # LlamaIndex's shared default key
    alice.put(ChatMessage(role="user", content=ALICE_SAYS))
    bob.put(ChatMessage(role="user", content=ASKED))
    assert [m.content for m in alice.get_all()] == [ALICE_SAYS]
    assert [m.content for m in bob.get_all()] == [ASKED]
    assert ElasticMemoryChatStore(memory=mem).get_keys() == []  # the agent's own conversations: none


async def test_a_users_async_chat_store_lists_only_their_keys(mem: CoreMemory) -> None:
    alice = ElasticMemoryAsyncChatStore(memory=mem.as_async(), user_id="alice")
    await alice.add_message("monday", ChatMessage(role="user", content=ALICE_SAYS))
    await ElasticMemoryAsyncChatStore(memory=mem, user_id="bob").add_message("tuesday", ChatMessage(content="hi"))
    assert (alice.user_id, await alice.get_keys()) == ("alice", ["monday"])
    assert alice.memory.user_id == "alice"


def test_a_users_chat_store_serialises_the_user(tmp_path: Path) -> None:
    with ElasticMemoryChatStore(path=tmp_path / "chat.db", user_id="alice") as store:
        store.add_message("k", ChatMessage(role="user", content=ALICE_SAYS))
        data = store.to_dict()
    assert data["user_id"] == "alice"
    with ElasticMemoryChatStore.from_dict(data) as alice, ElasticMemoryChatStore(path=tmp_path / "chat.db") as own:
        assert [m.content for m in alice.get_messages("k")] == [ALICE_SAYS]
        assert own.get_messages("k") == []
        assert "user_id" not in own.to_dict()  # the agent's own store serialises as before users


# ---------------------------------------------------------------------- how a user is given
@pytest.mark.usefixtures("loop_set")
def test_path_opens_the_users_handle_and_serialises_it(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    memory = ElasticMemory.from_defaults(db, user_id="alice", agent_id="assistant", session_id="s", embedder=None)
    memory.put_messages([ChatMessage(role="user", content=ALICE_SAYS), ChatMessage(role="assistant", content="Ok.")])
    assert (memory.memory.agent_id, memory.memory.user_id) == ("assistant", "alice")
    data = memory.to_dict()
    memory.close()
    with ElasticMemory.from_dict(data, embedder=None) as rebuilt:
        assert (rebuilt.memory.agent_id, rebuilt.user_id) == ("assistant", "alice")
        assert [m.content for m in rebuilt.get_all()] == [ALICE_SAYS, "Ok."]
        assert rebuilt.memory.facts.get("user.name").value == "Alice Novak"  # type: ignore[union-attr]
    with CoreMemory.open(db, agent_id="assistant", embedder=None) as own:
        assert own.facts.get("user.name") is None


def test_a_block_rebuilt_from_its_dump_reopens_the_users_memory(tmp_path: Path) -> None:
    with CoreMemory.open(tmp_path / "m.db", agent_id="assistant", embedder=None) as store:
        store.for_user("alice").facts.set("user.name", "Alice Novak")
        dump = ElasticMemoryBlock(memory=store, user_id="alice").model_dump()
    assert (dump["agent_id"], dump["user_id"]) == ("assistant", "alice")
    with ElasticMemoryBlock(**dump, embedder=None) as rebuilt:
        assert rebuilt.memory.facts.get("user.name").value == "Alice Novak"  # type: ignore[union-attr]


async def test_an_async_memory_serves_a_user_too(mem: CoreMemory) -> None:
    mem.for_user("alice").facts.set("user.name", "Alice Novak")
    block = ElasticMemoryBlock(memory=mem.as_async(), user_id="alice")
    assert "Alice Novak" in await block.aget([ChatMessage(role="user", content=ASKED)], session_id="s")


def test_a_users_handle_is_kept_as_given(mem: CoreMemory) -> None:
    block = ElasticMemoryBlock(memory=mem.for_user("alice"))
    assert block.user_id == "alice"
    assert ElasticMemory.from_defaults(memory=mem.for_user("alice")).user_id == "alice"


@pytest.mark.parametrize(
    "build",
    [
        lambda m: ElasticMemoryBlock(memory=m, user_id="bob"),
        lambda m: ElasticMemory.from_defaults(memory=m, user_id="bob"),
        lambda m: ElasticMemoryChatStore(memory=m, user_id="bob"),
        lambda m: ElasticMemoryAsyncChatStore(memory=m, user_id="bob"),
    ],
    ids=["block", "memory", "chat store", "async chat store"],
)
def test_a_handle_of_another_user_is_refused(mem: CoreMemory, build: Any) -> None:
    with pytest.raises(UsageError, match="serves user 'alice' and cannot serve user 'bob'"):
        build(mem.for_user("alice"))


def test_a_chat_store_of_another_user_is_refused(mem: CoreMemory) -> None:
    with pytest.raises(UsageError, match="chat_store= keeps the conversations of user None"):
        ElasticMemory.from_defaults(memory=mem, user_id="alice", chat_store=ElasticMemoryAsyncChatStore(memory=mem))
    history = ElasticMemoryAsyncChatStore(memory=mem, user_id="alice")
    assert ElasticMemory.from_defaults(memory=mem, user_id="alice", chat_store=history).sql_store is history


@pytest.mark.parametrize("bad", ["", "a\x00b", 7])
def test_a_bad_user_id_is_refused(mem: CoreMemory, bad: Any) -> None:
    with pytest.raises(UsageError, match="user_id must be None or a non-empty string"):
        ElasticMemory.from_defaults(memory=mem, user_id=bad)


def test_a_retriever_on_a_users_handle_recalls_only_theirs(mem: CoreMemory) -> None:
    mem.for_user("alice").remember("Alice keeps her passport in the blue drawer.")
    mem.for_user("bob").remember("Bob keeps his passport in the safe.")
    found = ElasticMemoryRetriever(memory=mem.for_user("bob"), mode="keyword").retrieve("passport")
    assert [n.node.get_content() for n in found] == ["Bob keeps his passport in the safe."]


# ---------------------------------------------------------------------- the built-in model
@pytest.mark.model
async def test_users_stay_apart_with_the_built_in_model(tmp_path: Path) -> None:
    """The same, with the core's own embedding model (offline): semantic recall is per user too."""
    async with await AsyncMemory.open(tmp_path / "users.db", agent_id="assistant", loop=LOOP) as amem:
        mem = amem.as_sync()
        await chat(mem, "alice", "alice-1", ALICE_SAYS)
        sent = await chat(mem, "bob", "bob-1", "Which foods should I avoid?")
        assert alices_in(prompt(sent)) == []
        bobs = await amem.for_user("bob").recall("food allergy", mode="semantic")
        assert alices_in(" ".join(h.content for h in bobs)) == []
        _, memory, _ = await chat(mem, "alice", "alice-2", "Which foods should I avoid?", reply="Peanuts.")
        assert "peanuts" in (memory.content or "")
