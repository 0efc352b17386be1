"""What the chat store tests share: messages of every kind, statuses and small helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.base.llms.types import (
    AudioBlock,
    CacheControl,
    CachePoint,
    CitableBlock,
    CitationBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    VideoBlock,
)
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.storage.chat_store.base_db import MessageStatus

from elastic_memory import Memory as CoreMemory

ACTIVE, ARCHIVED = MessageStatus.ACTIVE, MessageStatus.ARCHIVED
#: The core filter that lists chat messages (recall leaves them out otherwise).
MESSAGES = {"kind": "message"}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def every_kind() -> list[ChatMessage]:
    """Every role and every content-block type, with the fields a round trip could lose."""
    return [
        ChatMessage(role=MessageRole.SYSTEM, content="Be brief."),
        ChatMessage(role=MessageRole.DEVELOPER, content="Answer in metric units."),
        ChatMessage(
            role=MessageRole.USER,
            blocks=[
                TextBlock(text="What is in this picture?"),
                ImageBlock(image=PNG, image_mimetype="image/png", detail="high"),
                ImageBlock(url="https://example.com/cat.png"),
            ],
            additional_kwargs={"client": {"v": 2, "tags": ["a", "b"]}, "n": 1.5, "none": None},
        ),
        ChatMessage(
            role=MessageRole.ASSISTANT,
            blocks=[
                ThinkingBlock(content="The user wants a count.", num_tokens=6, additional_information={"sig": "x1"}),
                ToolCallBlock(tool_call_id="call-1", tool_name="count_cats", tool_kwargs={"picture": 1}),
            ],
            additional_kwargs={"tool_calls": [{"id": "call-1", "type": "function"}]},
        ),
        ChatMessage(role=MessageRole.TOOL, content="3", additional_kwargs={"tool_call_id": "call-1", "name": "count"}),
        ChatMessage(role=MessageRole.FUNCTION, content='{"cats": 3}', additional_kwargs={"name": "count_cats"}),
        ChatMessage(
            role=MessageRole.CHATBOT,
            blocks=[
                AudioBlock(audio=b"RIFF\x00\x00\x00\x00WAVE", format="wav"),
                VideoBlock(video=b"\x00\x00\x00\x18ftypmp42", video_mimetype="video/mp4", fps=24),
                DocumentBlock(data=b"%PDF-1.4 three cats", title="report", document_mimetype="application/pdf"),
            ],
        ),
        ChatMessage(
            role=MessageRole.MODEL,
            blocks=[
                CachePoint(cache_control=CacheControl(type="ephemeral", ttl="1h")),
                CitableBlock(content=[TextBlock(text="Cats sleep a lot.")], title="Cats", source="https://cats"),
                CitationBlock(
                    cited_content=TextBlock(text="sleep a lot"),
                    source="https://cats",
                    title="Cats",
                    additional_location_info={"page": 2},
                ),
            ],
        ),
        ChatMessage(role=MessageRole.ASSISTANT, blocks=[]),
        ChatMessage(role=MessageRole.ASSISTANT, content=""),
        ChatMessage(role=MessageRole.USER, content="ünïcödé ✓ 猫 \U0001f408"),
    ]


def texts(messages: list[ChatMessage]) -> list[str | None]:
    return [m.content for m in messages]


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def bot(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def frozen(at: float = 1_000.0) -> Callable[[], float]:
    return lambda: at


def forbid_sync_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every call of the core's sync facade fail (the async methods must not use it)."""
    for name in ("recall", "remember_many", "forget", "update", "tags", "get", "get_many", "remember", "vectors"):

        def boom(*args: Any, _name: str = name, **kwargs: Any) -> Any:
            raise AssertionError(f"the sync Memory.{_name} was called from an async method")

        monkeypatch.setattr(CoreMemory, name, boom)


def chatty(n: int) -> list[ChatMessage]:
    return [(user if i % 2 == 0 else bot)(f"message number {i} about the blue kettle") for i in range(n)]
