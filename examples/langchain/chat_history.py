"""``RunnableWithMessageHistory`` with the standard factory idiom, kept in one SQLite file.

``get_session_history=lambda sid: ElasticMemoryChatMessageHistory(sid, path=DB)`` builds a
history object per call; they all share one store per path per process (opened once, never
a model run: chat messages are stored without embedding). Two sessions stay apart, and a
"restarted" app (new history objects) reads each conversation back in order. The model is
LangChain's fake chat model, which gets the earlier messages in its prompt.

    python examples/langchain/chat_history.py
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from langchain_elastic_memory import ElasticMemoryChatMessageHistory


def main() -> int:
    """Chat in two sessions, then read one back; 0 when everything came back in order."""
    seen: list[int] = []  # how many messages each model call got

    def count(prompt: PromptValue) -> PromptValue:
        seen.append(len(prompt.to_messages()))
        return prompt

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "chat.db"
        model = FakeListChatModel(responses=["Hello Ada!", "Hi Bob!", "You are Ada."])
        prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # RunnableWithMessageHistory is deprecated upstream (LangGraph persistence)
            chain = RunnableWithMessageHistory(
                prompt | RunnableLambda(count) | model,
                get_session_history=lambda sid: ElasticMemoryChatMessageHistory(sid, path=db),
                input_messages_key="question",
                history_messages_key="history",
            )

        def ask(session: str, question: str) -> Any:
            return chain.invoke({"question": question}, {"configurable": {"session_id": session}}).content

        print("ada:", ask("ada", "I am Ada."))
        print("bob:", ask("bob", "I am Bob."))
        print("ada:", ask("ada", "Who am I?"))

        with ElasticMemoryChatMessageHistory("ada", path=db) as restarted:
            transcript = [f"{m.type}: {m.text}" for m in restarted.messages]
    print("ada's transcript:", transcript)

    ok = seen == [1, 1, 3] and transcript == [
        "human: I am Ada.",
        "ai: Hello Ada!",
        "human: Who am I?",
        "ai: You are Ada.",
    ]
    print("OK" if ok else f"WRONG: model calls got {seen} messages")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
