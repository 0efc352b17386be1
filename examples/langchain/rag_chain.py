"""A RAG chain: retrieve from ``ElasticMemoryVectorStore``, answer with a fake chat model.

Documents go into one SQLite file, embedded by the core's built-in offline model. The chain
is plain LCEL: ``{"context": retriever | join, "question": ...} | prompt | model``. The fake
model answers from a script, so the check is on what the model was given: the right
document for each question, found by meaning (no shared keywords needed).

    python examples/langchain/rag_chain.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from langchain_elastic_memory import ElasticMemoryVectorStore

DOCS = [
    Document("The office is closed on public holidays.", id="holidays"),
    Document("Expense reports are due on the fifth of each month.", id="expenses"),
    Document("The VPN needs the company authenticator app.", id="vpn"),
    Document("Parking spaces are assigned by the facilities team.", id="parking"),
]
QUESTIONS = {
    "When do I have to hand in receipts for reimbursement?": "expenses",
    "How do I connect to the network from home?": "vpn",
    "Who gives me a spot for my car?": "parking",
}


def main() -> int:
    """Ask each question; 0 when each prompt held the right document."""
    prompts: list[str] = []

    def keep(prompt: PromptValue) -> PromptValue:
        prompts.append(prompt.to_string())
        return prompt

    with tempfile.TemporaryDirectory() as folder:
        store = ElasticMemoryVectorStore(path=Path(folder) / "docs.db")
        store.add_documents(DOCS)
        retriever = store.as_retriever(search_kwargs={"k": 1})
        prompt = ChatPromptTemplate.from_messages(
            [("system", "Answer from this context only:\n{context}"), ("human", "{question}")]
        )
        model = FakeListChatModel(responses=[f"(answer {n})" for n in range(len(QUESTIONS))])
        chain = (
            {
                "context": retriever | (lambda docs: "\n".join(d.page_content for d in docs)),
                "question": RunnablePassthrough(),
            }
            | prompt
            | RunnableLambda(keep)
            | model
            | StrOutputParser()
        )
        wrong = []
        for question, expected in QUESTIONS.items():
            answer = chain.invoke(question)
            context = prompts[-1]
            found = next(d.id for d in DOCS if d.page_content in context)
            print(f"{question!r} -> context {found!r}, answer {answer!r}")
            if found != expected:
                wrong.append(question)
        store.close()

    print("OK" if not wrong else f"WRONG context for {wrong}")
    return 0 if not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
