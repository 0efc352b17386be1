"""ElasticMemoryChatStore beside LlamaIndex's reference, ``SimpleChatStore``: the same calls, compared.

Each test runs one scenario on both stores and compares what the calls return and the
transcripts they leave. Where the stores differ on purpose, the test asserts both
behaviours (docs/llamaindex.md, "Differences from the references").
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.storage.chat_store.base import BaseChatStore

from llama_index.storage.chat_store.elastic_memory import ElasticMemoryChatStore

Store = ElasticMemoryChatStore | SimpleChatStore


@pytest.fixture
def ours(tmp_path: Path) -> Iterator[ElasticMemoryChatStore]:
    with ElasticMemoryChatStore(path=tmp_path / "chat.db") as store:
        yield store


@pytest.fixture
def reference() -> SimpleChatStore:
    return SimpleChatStore()


def said(text: str, role: MessageRole = MessageRole.USER) -> ChatMessage:
    return ChatMessage(role=role, content=text)


def transcript(store: Store, key: str = "k") -> list[str | None]:
    return [m.content for m in store.get_messages(key)]


def on_both(ours: ElasticMemoryChatStore, reference: SimpleChatStore, call: Callable[[Store], Any]) -> None:
    """Run ``call`` on both stores; they must return the same and hold the same transcript after."""
    mine, theirs = call(ours), call(reference)
    assert mine == theirs
    assert transcript(ours) == transcript(reference)


def seeded(ours: ElasticMemoryChatStore, reference: SimpleChatStore, count: int = 4) -> None:
    for store in (ours, reference):
        store.set_messages("k", [said(f"m{n}") for n in range(count)])


# ------------------------------------------------------------------ signatures
def own(cls: type, name: str) -> inspect.Signature:
    return inspect.signature(getattr(cls, name))


@pytest.mark.parametrize(
    "name",
    [
        "set_messages",
        "get_messages",
        "add_message",
        "delete_messages",
        "delete_message",
        "delete_last_message",
        "get_keys",
        "aset_messages",
        "aget_messages",
        "async_add_message",
        "adelete_messages",
        "adelete_message",
        "adelete_last_message",
        "aget_keys",
    ],
)
def test_every_method_takes_the_reference_arguments(name: str) -> None:
    """Each parameter of SimpleChatStore's method exists here, in the same place, with the same default."""
    theirs = list(own(SimpleChatStore, name).parameters.values())
    mine = list(own(ElasticMemoryChatStore, name).parameters.values())
    assert [(p.name, p.kind, p.default) for p in mine[: len(theirs)]] == [(p.name, p.kind, p.default) for p in theirs]
    assert all(p.default is not inspect.Parameter.empty for p in mine[len(theirs) :])


def test_the_async_add_message_takes_idx_too() -> None:
    """An extension: BaseChatStore's async twin has no idx (SimpleChatStore's raises TypeError with one)."""
    assert "idx" not in own(BaseChatStore, "async_add_message").parameters
    assert own(ElasticMemoryChatStore, "async_add_message").parameters["idx"].default is None


# ---------------------------------------------------------------------- idx
@pytest.mark.parametrize("idx", [0, 1, 2, 3, 4, 7, -1, -2, -4, -9], ids=lambda i: f"idx={i}")
def test_add_message_at_idx_inserts_where_the_reference_does(
    ours: ElasticMemoryChatStore, reference: SimpleChatStore, idx: int
) -> None:
    seeded(ours, reference)
    on_both(ours, reference, lambda store: store.add_message("k", said("new"), idx=idx))


def test_add_message_at_idx_into_an_unknown_key(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    on_both(ours, reference, lambda store: store.add_message("k", said("first"), idx=3))
    assert ours.get_keys() == reference.get_keys() == ["k"]


def test_add_message_with_idx_none_appends(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    seeded(ours, reference)
    on_both(ours, reference, lambda store: store.add_message("k", said("last"), idx=None))


def test_inserting_at_zero_again_and_again_reverses(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    for n in range(6):
        on_both(ours, reference, lambda store, n=n: store.add_message("k", said(f"m{n}"), idx=0))
    assert transcript(ours) == [f"m{n}" for n in reversed(range(6))]


def test_a_random_session_leaves_the_same_transcript(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    """Appends, inserts anywhere, deletes by position and of the last, in one seeded order."""
    rng = random.Random(25)
    for n in range(40):
        roll = rng.random()
        size = len(reference.get_messages("k"))
        if roll < 0.55:
            idx = rng.choice([None, rng.randint(-size - 2, size + 2)])
            on_both(ours, reference, lambda store, n=n, idx=idx: store.add_message("k", said(f"m{n}"), idx=idx))
        elif roll < 0.85 and size:
            position = rng.randint(-size, size)  # in range, or one past the end
            on_both(ours, reference, lambda store, p=position: store.delete_message("k", p))
        elif size:
            on_both(ours, reference, lambda store: store.delete_last_message("k"))


async def test_async_add_message_at_idx_inserts_as_the_sync_reference(
    ours: ElasticMemoryChatStore, reference: SimpleChatStore
) -> None:
    seeded(ours, reference)
    await ours.async_add_message("k", said("new"), idx=1)
    reference.add_message("k", said("new"), idx=1)
    assert transcript(ours) == transcript(reference)


# ------------------------------------------------------------- the other calls
def test_set_and_get_alike(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    on_both(ours, reference, lambda store: store.set_messages("k", [said("a"), said("b", MessageRole.ASSISTANT)]))
    assert ours.get_messages("k") == reference.get_messages("k")


def test_get_messages_of_an_unknown_key_alike(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    on_both(ours, reference, lambda store: store.get_messages("nobody"))


@pytest.mark.parametrize("idx", [0, 2, 3, 4, -1, -4], ids=lambda i: f"idx={i}")
def test_delete_message_alike(ours: ElasticMemoryChatStore, reference: SimpleChatStore, idx: int) -> None:
    seeded(ours, reference)
    on_both(ours, reference, lambda store: store.delete_message("k", idx))


def test_delete_last_message_alike(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    seeded(ours, reference)
    on_both(ours, reference, lambda store: store.delete_last_message("k"))


def test_delete_messages_alike(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    seeded(ours, reference)
    on_both(ours, reference, lambda store: store.delete_messages("k"))
    assert ours.get_keys() == reference.get_keys() == []


@pytest.mark.parametrize("call", ["delete_messages", "delete_last_message"])
def test_deleting_from_an_unknown_key_returns_none_alike(
    ours: ElasticMemoryChatStore, reference: SimpleChatStore, call: str
) -> None:
    on_both(ours, reference, lambda store: getattr(store, call)("nobody"))


def test_get_keys_alike_when_written_in_order(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    for key in ("a", "b", "c"):
        ours.add_message(key, said(key))
        reference.add_message(key, said(key))
    assert ours.get_keys() == reference.get_keys()


# -------------------------------------------------------- intended differences
def test_get_keys_is_sorted(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    """The reference lists keys in the order first written; a row-based store lists them sorted."""
    for key in ("b", "a"):
        ours.add_message(key, said(key))
        reference.add_message(key, said(key))
    assert reference.get_keys() == ["b", "a"]
    assert ours.get_keys() == ["a", "b"]


def test_a_key_set_to_no_messages_is_gone(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    """The reference keeps an empty key (listed, and deleting it returns []); here a key is its messages."""
    for store in (ours, reference):
        store.set_messages("k", [])
    assert (reference.get_keys(), reference.delete_messages("k")) == (["k"], [])
    assert (ours.get_keys(), ours.delete_messages("k")) == ([], None)


def test_a_position_before_the_start_deletes_nothing(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    """The reference raises IndexError for idx < -len; here, as for idx >= len, the result is None."""
    seeded(ours, reference)
    with pytest.raises(IndexError):
        reference.delete_message("k", -5)
    assert ours.delete_message("k", -5) is None
    assert transcript(ours) == transcript(reference)


def test_the_last_message_of_an_emptied_key_is_none(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    """The reference raises IndexError (pop from an empty list) for a key it still lists."""
    seeded(ours, reference, count=1)
    on_both(ours, reference, lambda store: store.delete_last_message("k"))
    with pytest.raises(IndexError):
        reference.delete_last_message("k")
    assert ours.delete_last_message("k") is None


def test_messages_read_are_copies(ours: ElasticMemoryChatStore, reference: SimpleChatStore) -> None:
    """The reference returns its own list: appending to it changes the store."""
    seeded(ours, reference, count=1)
    reference.get_messages("k").append(said("sneaked in"))
    ours.get_messages("k").append(said("sneaked in"))
    assert transcript(reference) == ["m0", "sneaked in"]
    assert transcript(ours) == ["m0"]
