"""The inspector on a user's handle (``elastic-memory ui --user``): every page shows that user's memory only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from starlette.testclient import TestClient

from elastic_memory import LoopConfig, Memory
from elastic_memory.testing import FakeEmbedder
from elastic_memory.ui import Address, build_app

BASE = "http://127.0.0.1:8700"
PAGES = ["/", "/search?q=kitchen", "/facts", "/lessons", "/quarantine", "/sessions", "/context?q=allergic", "/graph"]


@pytest.fixture
def store(db_path: Path) -> Iterator[tuple[Memory, str]]:
    """Alice's turn, fact and note in an agent's store; the id of her note."""
    with Memory.open(db_path, agent_id="bot", embedder=FakeEmbedder(), loop=LoopConfig(background=False)) as mem:
        alice = mem.for_user("alice")
        alice.record_turn("My name is Alice Novak and I'm allergic to peanuts.", "Noted!", session_id="alice-1")
        note = alice.remember("Alice keeps peanuts out of the kitchen.")
        mem.for_user("bob").remember("Bob likes tea.")
        mem.drain()
        yield mem, str(note)


def _client(mem: Memory) -> TestClient:
    app = build_app(mem.as_async(), address=Address("127.0.0.1", 8700))  # type: ignore[arg-type]
    return TestClient(app, base_url=BASE)


@pytest.mark.parametrize("page", PAGES)
def test_no_page_of_another_user_shows_alices_memory(store: tuple[Memory, str], page: str) -> None:
    mem, _ = store
    response = _client(mem.for_user("bob")).get(page)
    assert response.status_code == 200
    assert "peanuts" not in response.text and "Novak" not in response.text


def test_another_users_memory_page_is_not_found(store: tuple[Memory, str]) -> None:
    mem, note = store
    assert _client(mem.for_user("bob")).get(f"/memories/{note}").status_code == 404
    assert _client(mem.for_user("alice")).get(f"/memories/{note}").status_code == 200


def test_the_users_own_pages_show_their_memory(store: tuple[Memory, str]) -> None:
    mem, _ = store
    client = _client(mem.for_user("alice"))
    assert "peanuts" in client.get("/search?q=peanuts").text
    assert "Alice Novak" in client.get("/facts").text
