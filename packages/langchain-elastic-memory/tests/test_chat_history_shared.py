"""The chat history's factory idiom is cheap: one store per path per process, messages never embedded."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core._api.deprecation import LangChainDeprecationWarning
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, message_to_dict
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from elastic_memory import LoopConfig, Memory
from elastic_memory.embedders import MiniLMEmbedder
from elastic_memory.testing import FakeEmbedder
from langchain_elastic_memory import ElasticMemoryChatMessageHistory, chat_history


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    """A database file; every history left on it is let go at the end."""
    yield tmp_path / "chat.db"
    gc.collect()


def chain_on(factory: Callable[[str], ElasticMemoryChatMessageHistory], replies: int) -> Any:
    model = FakeListChatModel(responses=[f"reply {n}" for n in range(replies)])
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    with pytest.warns(LangChainDeprecationWarning):
        return RunnableWithMessageHistory(
            prompt | model, factory, input_messages_key="question", history_messages_key="history"
        )


def test_the_factory_idiom_opens_the_store_once(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[object] = []
    real = chat_history.open_memory

    def counting(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(chat_history, "open_memory", counting)
    chain = chain_on(lambda sid: ElasticMemoryChatMessageHistory(sid, path=db), 5)
    for n in range(5):
        chain.invoke({"question": f"question {n}"}, {"configurable": {"session_id": "s1"}})
    assert opened == [db]


def test_the_factory_idiom_embeds_nothing_per_invoke(db: Path) -> None:
    """With a model given, the store checks it once (one text); the messages are never embedded."""
    fake = FakeEmbedder()
    chain = chain_on(lambda sid: ElasticMemoryChatMessageHistory(sid, path=db, embedder=fake), 3)
    for n in range(3):
        chain.invoke({"question": f"question {n}"}, {"configurable": {"session_id": "s1"}})
    assert fake.calls <= 1


def test_the_factory_idiom_with_the_builtin_model_never_runs_it(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[int] = []
    monkeypatch.setattr(MiniLMEmbedder, "embed", lambda self, texts: ran.append(len(texts)))
    monkeypatch.setattr(MiniLMEmbedder, "load", lambda self: None)  # no preload: the model is not needed
    chain = chain_on(lambda sid: ElasticMemoryChatMessageHistory(sid, path=db), 2)
    for n in range(2):
        chain.invoke({"question": f"question {n}"}, {"configurable": {"session_id": "s1"}})
    assert ran == []


def test_the_factory_idiom_keeps_the_conversation(db: Path) -> None:
    chain = chain_on(lambda sid: ElasticMemoryChatMessageHistory(sid, path=db, embedder=None), 2)
    chain.invoke({"question": "I am Ada."}, {"configurable": {"session_id": "s1"}})
    chain.invoke({"question": "Who am I?"}, {"configurable": {"session_id": "s1"}})
    with ElasticMemoryChatMessageHistory("s1", path=db, embedder=None) as history:
        assert [m.text for m in history.messages] == ["I am Ada.", "reply 0", "Who am I?", "reply 1"]


def test_histories_on_one_path_share_one_store(db: Path) -> None:
    with (
        ElasticMemoryChatMessageHistory("a", path=db, embedder=None) as a,
        ElasticMemoryChatMessageHistory("b", path=str(db), embedder=None) as b,
    ):
        assert a.memory is b.memory


def test_other_options_open_another_store(db: Path) -> None:
    with (
        ElasticMemoryChatMessageHistory("a", path=db, embedder=None) as a,
        ElasticMemoryChatMessageHistory("b", path=db, embedder=None, agent_id="bot") as b,
        ElasticMemoryChatMessageHistory("c", path=db, embedder=None, timeout=7.0) as c,
    ):
        assert a.memory is b.memory and a.memory is not c.memory


def test_a_dropped_history_leaves_the_store_open_for_the_next(db: Path) -> None:
    before = chat_history.shared_stores()
    ElasticMemoryChatMessageHistory("a", path=db, embedder=None).add_messages([HumanMessage("hi")])
    gc.collect()
    assert chat_history.shared_stores() == before + 1
    ElasticMemoryChatMessageHistory("a", path=db, embedder=None).close()


def test_the_store_stays_open_while_a_history_holds_it(db: Path) -> None:
    before = chat_history.shared_stores()
    a = ElasticMemoryChatMessageHistory("a", path=db, embedder=None)
    with ElasticMemoryChatMessageHistory("b", path=db, embedder=None):
        pass
    a.add_messages([HumanMessage("still open")])
    assert chat_history.shared_stores() == before + 1
    a.close()


def test_the_last_history_closes_the_store(db: Path) -> None:
    before = chat_history.shared_stores()
    a = ElasticMemoryChatMessageHistory("a", path=db, embedder=None)
    b = ElasticMemoryChatMessageHistory("b", path=db, embedder=None)
    a.close()
    b.close()
    assert chat_history.shared_stores() == before


def test_closing_twice_lets_go_once(db: Path) -> None:
    a = ElasticMemoryChatMessageHistory("a", path=db, embedder=None)
    b = ElasticMemoryChatMessageHistory("b", path=db, embedder=None)
    a.close()
    a.close()
    b.add_messages([HumanMessage("still open")])
    assert [m.text for m in b.messages] == ["still open"]
    b.close()


def test_in_memory_histories_are_not_shared() -> None:
    with (
        ElasticMemoryChatMessageHistory("a", path=":memory:", embedder=None) as a,
        ElasticMemoryChatMessageHistory("a", path=":memory:", embedder=None) as b,
    ):
        a.add_messages([HumanMessage("only in a")])
        assert b.messages == []


@pytest.fixture
def mem() -> Iterator[Memory]:
    with Memory.open(":memory:", embedder=FakeEmbedder(), loop=LoopConfig(background=False)) as memory:
        yield memory


def test_messages_are_stored_as_kind_message(mem: Memory) -> None:
    ElasticMemoryChatMessageHistory("s", memory=mem).add_messages([HumanMessage("Ada likes tea")])
    assert [h.kind for h in mem.recall("tea", filters={"kind": "message"})] == ["message"]


def test_messages_are_left_out_of_recall(mem: Memory) -> None:
    ElasticMemoryChatMessageHistory("s", memory=mem).add_messages([HumanMessage("Ada likes tea")])
    assert mem.recall("Ada likes tea") == []


def test_messages_have_no_vector(mem: Memory) -> None:
    ElasticMemoryChatMessageHistory("s", memory=mem).add_messages([HumanMessage("Ada likes tea")])
    [hit] = mem.recall("tea", filters={"kind": "message"})
    assert mem.vectors([hit.id]) == {}


def test_messages_an_earlier_release_stored_as_notes_are_read(mem: Memory) -> None:
    old = HumanMessage("from an earlier release")
    mem.remember(
        old.text,
        agent_id="default:chat_history",
        session_id="s",
        type="episodic",
        metadata={"seq": 0, "message": message_to_dict(old)},
    )
    history = ElasticMemoryChatMessageHistory("s", memory=mem)
    history.add_messages([AIMessage("and a new one")])
    assert [m.text for m in history.messages] == ["from an earlier release", "and a new one"]


def test_histories_left_open_at_exit_close_quietly(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import warnings
        warnings.simplefilter("error")
        from langchain_core.messages import HumanMessage
        from langchain_elastic_memory import ElasticMemoryChatMessageHistory
        keep = [ElasticMemoryChatMessageHistory(s, path={str(tmp_path / "exit.db")!r}, embedder=None) for s in "ab"]
        keep[0].add_messages([HumanMessage("left open")])
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-X", "tracemalloc", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
