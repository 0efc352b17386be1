"""Hooks rebuilt from paths (Agent.from_dict) share one store per file in the process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_integrations.memory_stores.elastic_memory import (
    ElasticMemoryRecallHook,
    ElasticMemoryRecordHook,
    memory_hooks,
)


@component
class Echo:
    """An offline chat generator: answers every call with the same text."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return {"replies": [ChatMessage.from_assistant("Noted.")]}


@pytest.fixture(autouse=True)
def _trust_this_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Haystack deserialises only allowlisted modules: this test module's generator too."""
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", Echo.__module__)


def _rebuilt(path: Path) -> tuple[Agent, Any, Any]:
    agent = Agent(chat_generator=Echo(), hooks=memory_hooks(path=str(path), embedder=None))
    again = Agent.from_dict(agent.to_dict())
    agent.close()
    hooks = again.hooks  # type: ignore[attr-defined]
    return again, hooks["before_run"][0], hooks["after_run"][0]


def test_agent_from_dict_opens_the_file_once(tmp_path: Path) -> None:
    agent, recall, record = _rebuilt(tmp_path / "m.db")
    try:
        assert recall.memory is record.memory
    finally:
        agent.close()


def test_a_rebuilt_agent_records_and_recalls_through_the_shared_store(tmp_path: Path) -> None:
    agent, recall, _ = _rebuilt(tmp_path / "m.db")
    try:
        agent.warm_up()
        agent.run(messages=[ChatMessage.from_user("My cat is called Pixel.")])
        hits = recall.memory.recall("Pixel", k=5, mode="keyword", touch=False)
        assert any("Pixel" in h.content for h in hits)
    finally:
        agent.close()


def test_the_store_stays_open_until_its_last_hook_closes(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    first = ElasticMemoryRecallHook(path=path, embedder=None)
    second = ElasticMemoryRecordHook(path=path, embedder=None)
    first.close()
    second.memory.remember("still open")
    second.close()
    third = ElasticMemoryRecallHook(path=path, embedder=None)
    try:
        assert third.memory is not second.memory
        assert [h.content for h in third.memory.recall("open", k=1, mode="keyword")] == ["still open"]
    finally:
        third.close()


def test_different_settings_open_their_own_store(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    keyword = ElasticMemoryRecallHook(path=path, embedder=None)
    other = ElasticMemoryRecallHook(path=str(tmp_path / "other.db"), embedder=None)
    try:
        assert keyword.memory is not other.memory
    finally:
        keyword.close()
        other.close()
