"""Any id the store accepts has its inspector pages: links, form actions and redirects as a browser follows them."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from starlette.testclient import TestClient

from elastic_memory import Memory
from elastic_memory.testing import FakeEmbedder
from elastic_memory.ui import Address, build_app

BASE = "http://127.0.0.1:8700"
TOKEN = "s3cret-token-for-the-inspector"
IDS = ["../../lessons", "x/forget", "a%2Fb", "q?x=1#f", "..", ".", "with space/ünï/..", "%", "x/edit/"]


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=FakeEmbedder()) as m:
        m.remember("The decoy memory x.", id="x")
        m.lessons.add("Use metric units.")
        yield m


def web(mem: Memory) -> TestClient:
    app = build_app(mem.as_async(), address=Address("127.0.0.1", 8700))
    return TestClient(app, base_url=BASE)


def follow(page_url: str, link: str) -> str:
    """The path and query a browser requests for ``link`` on ``page_url`` (dot segments resolved)."""
    parts = urlsplit(urljoin(BASE + page_url, html.unescape(link)))
    return parts.path + (f"?{parts.query}" if parts.query else "")


def link_to(page: str, label: str) -> str:
    found = re.search(rf'href="([^"]+)"[^>]*>{re.escape(label)}', page)
    assert found, f"no link {label!r}"
    return found.group(1)


def form_of(page: str) -> tuple[str, str]:
    action = re.search(r'<form[^>]*method="post" action="([^"]+)"', page)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert action and csrf
    return action.group(1), csrf.group(1)


def opened(mem: Memory, mid: str) -> tuple[TestClient, str]:
    """The client, and the path of ``mid``'s page as reached from the search results."""
    mem.remember(f"A memory whose id is {mid}.", id=mid)
    client = web(mem)
    results = client.get("/search", params={"q": "memory whose id", "mode": "keyword"}).text
    return client, follow("/search", link_to(results, f"A memory whose id is {html.escape(mid)}."))


@pytest.mark.parametrize("mid", IDS)
def test_a_link_to_a_memory_opens_that_memory(mem: Memory, mid: str) -> None:
    client, path = opened(mem, mid)
    page = client.get(path)
    assert page.status_code == 200, page.text
    assert f"A memory whose id is {mid}." in html.unescape(page.text)


@pytest.mark.parametrize("mid", IDS)
def test_a_memory_of_any_id_can_be_edited(mem: Memory, mid: str) -> None:
    client, path = opened(mem, mid)
    edit_path = follow(path, link_to(client.get(path).text, "Edit"))
    action, csrf = form_of(client.get(edit_path).text)
    form = {"csrf": csrf, "content": "Changed.", "importance": "0.5", "metadata": "{}"}
    saved = client.post(follow(edit_path, action), data=form, follow_redirects=False)
    assert saved.status_code == 303
    back = client.get(follow(edit_path, saved.headers["location"]))
    assert back.status_code == 200 and "Saved." in back.text and "Changed." in back.text
    record = mem.get(mid)
    assert record is not None and record.content == "Changed."


@pytest.mark.parametrize("mid", IDS)
def test_a_memory_of_any_id_can_be_forgotten_and_restored(mem: Memory, mid: str) -> None:
    client, path = opened(mem, mid)
    confirm_path = follow(path, link_to(client.get(path).text, "Forget"))
    action, csrf = form_of(client.get(confirm_path).text)
    done = client.post(follow(confirm_path, action), data={"csrf": csrf}, follow_redirects=False)
    assert done.status_code == 303
    record, decoy = mem.get(mid), mem.get("x")
    assert record is not None and record.deleted_at is not None
    assert decoy is not None and decoy.deleted_at is None
    restore_path = follow(path, link_to(client.get(path).text, "Restore"))
    action, csrf = form_of(client.get(restore_path).text)
    client.post(follow(restore_path, action), data={"csrf": csrf})
    back = mem.get(mid)
    assert back is not None and back.deleted_at is None


def test_an_id_ending_in_an_action_name_is_that_memory_not_the_action(mem: Memory) -> None:
    mem.remember("The memory x/forget.", id="x/forget")
    page = web(mem).get("/memories/x%2Fforget")
    assert page.status_code == 200 and "The memory x/forget." in page.text and "Yes, forget it" not in page.text


def test_an_encoded_id_is_decoded_once(mem: Memory) -> None:
    mem.remember("Percent two F.", id="a%2Fb")
    mem.remember("A slash.", id="a/b")
    client = web(mem)
    assert "Percent two F." in client.get("/memories/a%252Fb").text
    assert "A slash." in client.get("/memories/a%2Fb").text


def test_a_path_past_the_id_and_action_is_a_clear_404(mem: Memory) -> None:
    page = web(mem).get("/memories/x/forget/now")
    assert page.status_code == 404 and "%2F" in page.text


def test_the_token_redirect_keeps_an_encoded_slash(mem: Memory) -> None:
    app = build_app(mem.as_async(), address=Address("0.0.0.0", 8700), token=TOKEN)
    client = TestClient(app, base_url="http://192.0.2.7:8700")
    entered = client.get(f"/memories/x%2Fforget?token={TOKEN}", follow_redirects=False)
    assert entered.status_code == 303 and entered.headers["location"] == "/memories/x%2Fforget"


@pytest.mark.parametrize("sid", ["a/../../lessons", "..", "s%2F1", "q?x=1#f"])
def test_a_link_to_a_session_opens_its_transcript(mem: Memory, sid: str) -> None:
    mid = mem.remember("A note of an odd session.", session_id=sid)
    client = web(mem)
    page = client.get(f"/memories/{mid}").text
    transcript = client.get(follow(f"/memories/{mid}", link_to(page, html.escape(sid))))
    assert transcript.status_code == 200 and "<h1>Session" in transcript.text
    assert "A note of an odd session." in transcript.text
