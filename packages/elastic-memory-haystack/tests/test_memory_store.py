"""ElasticMemoryStore: the haystack-experimental MemoryStore protocol."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from haystack.dataclasses import ChatMessage
from haystack.errors import FilterError

from elastic_memory import Memory, UsageError
from haystack_integrations.memory_stores.elastic_memory import ElasticMemoryStore


@pytest.fixture
def store():
    with ElasticMemoryStore(path=":memory:", embedder=None) as s:
        yield s


HISTORY = [
    ChatMessage.from_system("You are helpful."),
    ChatMessage.from_user("I live in Leeds.", meta={"topic": "home", "year": 2024}),
    ChatMessage.from_assistant("Leeds is lovely.", meta={"topic": "home", "year": 2025}),
    ChatMessage.from_user("My favourite drink is green tea.", meta={"topic": "food", "year": 2026}),
]


def _count(store: ElasticMemoryStore, user_id: str | None = None) -> int:
    return len(store.search_memories(top_k=1000, user_id=user_id))


def _protocol_members(protocol: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(protocol, name))
        for name in dir(protocol)
        if not name.startswith("_") and callable(getattr(protocol, name))
    }


def test_protocol_conformance(store):
    types = pytest.importorskip("haystack_experimental.memory_stores.types")
    members = _protocol_members(types.MemoryStore)
    assert {"to_dict", "from_dict", "add_memories", "search_memories", "delete_all_memories", "delete_memory"} <= set(
        members
    )
    for name, signature in members.items():
        ours = inspect.signature(getattr(store, name))
        for param in signature.parameters.values():
            if param.name in ("self", "cls") or param.kind is param.VAR_KEYWORD:
                continue
            assert param.name in ours.parameters, (name, param.name)
            assert ours.parameters[param.name].kind == param.kind, (name, param.name)
            assert ours.parameters[param.name].default == param.default, (name, param.name)


def test_add_skips_system_and_is_idempotent(store):
    store.add_memories(messages=HISTORY, user_id="ada")
    assert _count(store, "ada") == 3
    store.add_memories(messages=HISTORY, user_id="ada")  # agents resend the whole history
    store.add_memories(messages=[*HISTORY, ChatMessage.from_assistant("Noted.")], user_id="ada")
    assert _count(store, "ada") == 4


def test_same_text_with_two_roles_is_two_memories(store):
    store.add_memories(messages=[ChatMessage.from_user("Hello"), ChatMessage.from_assistant("Hello")])
    assert sorted(m.meta["role"] for m in store.search_memories(top_k=10)) == ["assistant", "user"]


def test_users_are_isolated(store):
    store.add_memories(messages=HISTORY, user_id="ada")
    store.add_memories(messages=[ChatMessage.from_user("I live in Paris.")], user_id="bob")
    assert [m.text for m in store.search_memories(query="live", user_id="bob")] == ["I live in Paris."]
    assert "I live in Paris." not in [m.text for m in store.search_memories(query="live", user_id="ada")]
    assert store.search_memories(query="live") == []  # the default user has none


def test_search_returns_system_messages_with_meta(store):
    store.add_memories(messages=HISTORY, user_id="ada", metadata={"source": "chat"})
    [hit] = store.search_memories(query="green tea", user_id="ada", top_k=1)
    assert hit.role.value == "system"
    assert hit.text == "My favourite drink is green tea."
    assert hit.meta["topic"] == "food" and hit.meta["source"] == "chat"
    assert hit.meta["role"] == "user" and hit.meta["user_id"] == "ada"
    assert hit.meta["memory_id"].startswith("hsmem-")


def test_top_k(store):
    store.add_memories(messages=HISTORY, user_id="ada")
    assert len(store.search_memories(user_id="ada", top_k=2)) == 2
    assert store.search_memories(user_id="ada", top_k=0) == []
    with pytest.raises(UsageError):
        store.search_memories(user_id="ada", top_k=-1)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"field": "meta.topic", "operator": "==", "value": "home"}, {"I live in Leeds.", "Leeds is lovely."}),
        ({"field": "meta.topic", "operator": "!=", "value": "home"}, {"My favourite drink is green tea."}),
        (
            {"field": "meta.year", "operator": ">", "value": 2024},
            {"Leeds is lovely.", "My favourite drink is green tea."},
        ),
        ({"field": "meta.year", "operator": "<=", "value": 2024}, {"I live in Leeds."}),
        ({"field": "meta.role", "operator": "in", "value": ["assistant"]}, {"Leeds is lovely."}),
        ({"field": "meta.topic", "operator": "not in", "value": ["home", "x"]}, {"My favourite drink is green tea."}),
        (
            {
                "operator": "AND",
                "conditions": [
                    {"field": "meta.topic", "operator": "==", "value": "home"},
                    {"field": "meta.role", "operator": "==", "value": "user"},
                ],
            },
            {"I live in Leeds."},
        ),
        (
            {
                "operator": "OR",
                "conditions": [
                    {"field": "meta.year", "operator": "==", "value": 2026},
                    {"field": "meta.role", "operator": "==", "value": "assistant"},
                ],
            },
            {"Leeds is lovely.", "My favourite drink is green tea."},
        ),
        (
            {"operator": "NOT", "conditions": [{"field": "meta.topic", "operator": "==", "value": "home"}]},
            {"My favourite drink is green tea."},
        ),
    ],
)
def test_filters(store, filters, expected):
    store.add_memories(messages=HISTORY, user_id="ada")
    assert {m.text for m in store.search_memories(filters=filters, user_id="ada", top_k=10)} == expected


def test_filters_with_query(store):
    store.add_memories(messages=HISTORY, user_id="ada")
    found = store.search_memories(
        query="Leeds", filters={"field": "meta.role", "operator": "==", "value": "user"}, user_id="ada"
    )
    assert [m.text for m in found] == ["I live in Leeds."]


def test_a_filter_finds_matches_past_the_first_thousand_memories(store):
    """The filter narrows the recall itself: two old matches under 1,200 newer memories are found."""
    old = [ChatMessage.from_user(f"Old note {n} on the garden.", meta={"topic": "garden"}) for n in range(2)]
    store.add_memories(messages=old, user_id="ada")
    store.add_memories(messages=[ChatMessage.from_user(f"Newer note number {n}.") for n in range(1200)], user_id="ada")
    found = store.search_memories(filters={"field": "meta.topic", "operator": "==", "value": "garden"}, user_id="ada")
    assert sorted(m.text for m in found) == ["Old note 0 on the garden.", "Old note 1 on the garden."]


def test_a_filter_on_content_is_checked_in_python(store):
    store.add_memories(messages=HISTORY, user_id="ada")
    found = store.search_memories(
        filters={"field": "content", "operator": "==", "value": "Leeds is lovely."}, user_id="ada"
    )
    assert [m.text for m in found] == ["Leeds is lovely."]


@pytest.mark.parametrize(
    "filters",
    [
        {"field": "meta.topic", "value": "home"},
        {"field": "meta.topic", "operator": "~~", "value": "home"},
        {"operator": "AND"},
        {"field": "meta.topic", "operator": "in", "value": "home"},
    ],
)
def test_malformed_filters_raise(store, filters):
    store.add_memories(messages=HISTORY, user_id="ada")
    with pytest.raises(FilterError):
        store.search_memories(filters=filters, user_id="ada")


def test_malformed_filters_raise_on_an_empty_store(store):
    with pytest.raises(FilterError):
        store.search_memories(filters={"operator": "OR"})


def test_delete_memory(store):
    store.add_memories(messages=HISTORY, user_id="ada")
    [hit] = store.search_memories(query="green tea", user_id="ada", top_k=1)
    store.delete_memory(hit.meta["memory_id"])
    assert _count(store, "ada") == 2
    store.delete_memory(hit.meta["memory_id"])  # unknown ids are ignored
    store.delete_memory("no-such-id")
    store.add_memories(messages=HISTORY, user_id="ada")  # and it can be added again
    assert _count(store, "ada") == 3


def test_delete_memory_leaves_other_agents_alone(store):
    other = store.memory.remember("Not a haystack memory.")
    store.delete_memory(other)
    assert store.memory.get(other) is not None


def test_delete_all_memories(store):
    store.add_memories(messages=HISTORY, user_id="ada")
    store.add_memories(messages=HISTORY, user_id="bob")
    store.add_memories(messages=HISTORY)
    kept = store.memory.remember("The store's own memory.")
    store.delete_all_memories(user_id="ada")
    assert _count(store, "ada") == 0 and _count(store, "bob") == 3 and _count(store) == 3
    store.delete_all_memories()
    assert _count(store, "bob") == 0 and _count(store) == 0
    assert store.memory.get(kept) is not None


def test_memories_stay_out_of_the_memory_loop(store):
    store.add_memories(messages=[ChatMessage.from_user("The launch code is swordfish.")], user_id="ada")
    assert "swordfish" not in store.memory.build_context("What is the launch code?").render()


def test_to_dict_from_dict(tmp_path: Path):
    path = tmp_path / "mem.db"
    with ElasticMemoryStore(path=path, embedder=None, agent_id="bot:mem", mode="keyword") as store:
        store.add_memories(messages=HISTORY, user_id="ada")
        data = store.to_dict()
    assert data["type"] == "haystack_integrations.memory_stores.elastic_memory.memory_store.ElasticMemoryStore"
    assert data["init_parameters"] == {
        "path": str(path.resolve()),
        "agent_id": "bot:mem",
        "mode": "keyword",
        "embedder": None,
    }
    with ElasticMemoryStore.from_dict(data) as again:
        assert _count(again, "ada") == 3


def test_relative_path_is_serialised_absolute(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with ElasticMemoryStore(path="rel.db", embedder=None) as store:
        assert store.to_dict()["init_parameters"]["path"] == str(tmp_path.resolve() / "rel.db")


def test_memory_argument_is_left_open(tmp_path: Path):
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        store = ElasticMemoryStore(memory=mem)
        store.add_memories(messages=HISTORY)
        store.close()
        assert mem.recall("Leeds", filters={"agent_id": "default:haystack_memory"})
        assert store.to_dict()["init_parameters"]["path"] == str((tmp_path / "m.db").resolve())


def test_argument_errors():
    with pytest.raises(UsageError):
        ElasticMemoryStore()
    with pytest.raises(UsageError):
        ElasticMemoryStore(path=":memory:", embedder=None, mode="fuzzy")
    with ElasticMemoryStore(path=":memory:", embedder=None) as store:
        with pytest.raises(UsageError):
            store.add_memories(messages=ChatMessage.from_user("x"))
        with pytest.raises(UsageError):
            store.add_memories(messages=["x"])
        with pytest.raises(UsageError):
            store.add_memories(messages=[ChatMessage.from_user("x")], user_id="")


def test_import_does_not_need_haystack_experimental():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['haystack_experimental'] = None\n"
        "from haystack_integrations.memory_stores.elastic_memory import ElasticMemoryStore\n"
        "from haystack_integrations.memory_stores.elastic_memory import ElasticMemoryChatMessageStore"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
