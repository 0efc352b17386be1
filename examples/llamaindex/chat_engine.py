"""A LlamaIndex chat engine that remembers across sessions, with ``ElasticMemory`` in one SQLite file.

Two sessions of ``SimpleChatEngine`` over LlamaIndex's offline mock LLM
(``MockFunctionCallingLLM``, a ``MockLLM`` answering from a script here; it also keeps what it
was sent). On Monday the user says where they live and their dog's name; on Tuesday, a new
session in a new memory object, the memory block puts what Monday taught into the prompt.
The memory records each turn as it is put and embeds it with the built-in offline model. It
checks what it prints.

    python examples/llamaindex/chat_engine.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM

from llama_index.memory.elastic_memory import ElasticMemory


def chat(db: Path, session_id: str, text: str, reply: str) -> str:
    """One request of a chat app (the session's memory, one chat); the prompt the LLM was sent."""
    sent: list[ChatMessage] = []

    def answer(messages: list[ChatMessage], **kwargs: object) -> ChatMessage:
        sent.extend(messages)
        return ChatMessage(role="assistant", content=reply)

    with ElasticMemory.from_defaults(db, session_id=session_id) as memory:
        engine = SimpleChatEngine.from_defaults(llm=MockFunctionCallingLLM(response_generator=answer), memory=memory)
        engine.chat(text)
    return "\n".join(f"{m.role.value}: {m.content}" for m in sent)


def main(db: Path) -> None:
    """Monday teaches, Tuesday asks; check what Tuesday's LLM was sent and what the file keeps."""
    chat(db, "monday", "I live in Leeds. My dog is called Biscuit.", "Hello from Leeds!")
    seen = chat(db, "tuesday", "What is my dog called?", "Biscuit.")
    print("Tuesday's LLM saw Biscuit:", "Biscuit" in seen)
    print("Tuesday's LLM saw Leeds:", "Leeds" in seen)
    with ElasticMemory.from_defaults(db, session_id="tuesday") as memory:
        history = [m.content for m in memory.get_all()]
        print("Tuesday's chat history:", len(history), "messages")
        location = memory.memory.facts.get("user.location")
        print("fact user.location:", location.value if location else None)

    if "Biscuit" not in seen or "Leeds" not in seen:
        sys.exit(f"Tuesday's prompt lacks what Monday taught:\n{seen}")
    if len(history) != 2 or history[0] != "What is my dog called?":
        sys.exit(f"Tuesday's history is wrong: {history}")
    if location is None or location.value != "Leeds":
        sys.exit(f"the fact was not kept: {location}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(Path(folder) / "chat.db")
