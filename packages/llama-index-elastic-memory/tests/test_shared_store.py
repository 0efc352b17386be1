"""One open store per file per process: the package's classes opened with the same ``path=`` share it."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import pytest
from llama_index.core.llms import ChatMessage

from elastic_memory import UsageError
from elastic_memory.testing import FakeEmbedder
from llama_index.memory.elastic_memory import ElasticMemory
from llama_index.storage.chat_store.elastic_memory import ElasticMemoryAsyncChatStore, ElasticMemoryChatStore


def hello() -> ChatMessage:
    return ChatMessage(role="user", content="hello")


def test_two_memories_on_one_path_share_one_store(tmp_path: Path) -> None:
    with (
        ElasticMemory.from_defaults(tmp_path / "m.db", session_id="a", embedder=None) as first,
        ElasticMemory.from_defaults(str(tmp_path / "m.db"), session_id="b", embedder=None) as second,
    ):
        assert first.memory is second.memory


def test_the_store_stays_open_while_another_user_holds_it(tmp_path: Path) -> None:
    first = ElasticMemoryChatStore(path=tmp_path / "m.db")
    second = ElasticMemoryChatStore(path=tmp_path / "m.db")
    first.close()
    second.add_message("k", hello())
    assert [m.content for m in second.get_messages("k")] == ["hello"]
    second.close()


def test_the_store_closes_with_its_last_user(tmp_path: Path) -> None:
    first = ElasticMemoryChatStore(path=tmp_path / "m.db")
    second = ElasticMemoryChatStore(path=tmp_path / "m.db")
    first.close()
    second.close()
    with pytest.raises(UsageError, match="closed"):
        second.memory.remember("too late")


def test_closing_twice_releases_the_store_once(tmp_path: Path) -> None:
    first = ElasticMemoryChatStore(path=tmp_path / "m.db")
    second = ElasticMemoryChatStore(path=tmp_path / "m.db")
    first.close()
    first.close()
    second.add_message("k", hello())  # still open: first's second close did not count
    second.close()


async def test_an_async_close_releases_the_store(tmp_path: Path) -> None:
    store = ElasticMemoryAsyncChatStore(path=tmp_path / "m.db")
    await store.aclose()
    with pytest.raises(UsageError, match="closed"):
        store.memory.remember("too late")


def test_a_store_reopens_after_its_last_user_closed(tmp_path: Path) -> None:
    with ElasticMemoryChatStore(path=tmp_path / "m.db") as before:
        before.add_message("k", hello())
    with ElasticMemoryChatStore(path=tmp_path / "m.db") as after:
        assert [m.content for m in after.get_messages("k")] == ["hello"]


def test_different_settings_open_different_stores(tmp_path: Path) -> None:
    with (
        ElasticMemoryChatStore(path=tmp_path / "m.db") as plain,
        ElasticMemoryChatStore(path=tmp_path / "m.db", embedder=FakeEmbedder()) as embedding,
    ):
        assert plain.memory is not embedding.memory


def test_in_memory_databases_are_never_shared() -> None:
    with ElasticMemoryChatStore(path=":memory:") as one, ElasticMemoryChatStore(path=":memory:") as other:
        one.add_message("k", hello())
        assert other.get_keys() == []


def test_users_of_one_file_share_the_store_and_keep_their_own_keys(tmp_path: Path) -> None:
    with (
        ElasticMemoryChatStore(path=tmp_path / "m.db", user_id="alice") as alice,
        ElasticMemoryChatStore(path=tmp_path / "m.db", user_id="bob") as bob,
    ):
        alice.add_message("chat_history", hello())
        assert (alice.get_keys(), bob.get_keys()) == (["chat_history"], [])


def test_a_refused_user_does_not_keep_the_store_open(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        ElasticMemoryChatStore(path=tmp_path / "m.db", user_id="")
    with ElasticMemoryChatStore(path=tmp_path / "m.db") as store:
        store.close()
        with pytest.raises(UsageError, match="closed"):
            store.memory.remember("too late")  # the refused open left no user behind


def test_memories_built_per_request_leave_no_resource_warning(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(3):
            memory = ElasticMemory.from_defaults(tmp_path / "m.db", session_id=f"s{n}", embedder=None)
            memory.put(hello())
            memory.close()
        del memory
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
